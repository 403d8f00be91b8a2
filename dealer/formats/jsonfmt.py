"""JSON: bridge-dealer's own deal file, documented in docs/formats.md.

``{"format": "bridge-dealer/deals", "version": 1, "event": ..., "site": ..., "date": ..., "boards": [
{"board": 1, "dealer": "N", "vulnerable": "None", "deal": "N:AJ9.K9542.Q.AK93 ...", "canonical": "<26 hex>",
"tags": {...}}]}``. ``deal`` is PBN with North first; ``canonical`` is the 13-byte canonical form in hex
and, when present, must agree with ``deal``. ``tags`` is optional.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from dealer.core import Deal, Seat, Vulnerability
from dealer.core.errors import DealerError
from dealer.core.json_types import JsonObject

from ._common import law2_record, numbered
from .base import (
    MAX_FIELD_CHARS,
    MAX_INT_DIGITS,
    MAX_JSON_DEPTH,
    BoardRecord,
    ExportMeta,
    FormatError,
    ReadProblem,
    ReadResult,
    register,
)

FORMAT_ID = "bridge-dealer/deals"
VERSION = 1


def _deal_of(deal_text: str, canonical: object, i: int) -> Deal:
    """The deal; when ``canonical`` is given it must be the same deal (fast path: our own writer's output)."""
    if canonical is None:
        return Deal.from_pbn(deal_text)
    if not isinstance(canonical, str) or len(canonical) != 26:
        raise FormatError("boards[{i}].canonical {canonical!r} is not 26 hex digits", i=i, canonical=canonical)
    try:
        deal = Deal.from_bytes(bytes.fromhex(canonical))
    except ValueError as exc:
        raise FormatError(
            "boards[{i}].canonical {canonical!r} is not a deal: {exc}", i=i, canonical=canonical, exc=exc
        ) from exc
    if deal_text != deal.to_pbn(Seat.N) and Deal.from_pbn(deal_text) != deal:
        raise FormatError("boards[{i}].canonical {canonical!r} does not match its deal", i=i, canonical=canonical)
    return deal


class _LimitError(DealerError, ValueError):
    """A JSON number past the limits the reader keeps (its digits, NaN or Infinity)."""


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise _LimitError(
            "a number of {n:,} digits (at most {most} are read)", n=len(text.lstrip("-")), most=MAX_INT_DIGITS
        )
    return int(text)


def _no_constant(name: str) -> float:
    raise _LimitError("{name} is not a JSON number", name=name)


def _check_doc(doc: object, source: str) -> None:
    """Refuse arrays and objects nested deeper than ``MAX_JSON_DEPTH`` and strings over ``MAX_FIELD_CHARS``."""
    stack: list[tuple[object, int]] = [(doc, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, str):
            if len(node) > MAX_FIELD_CHARS:
                raise FormatError(
                    "{source}: a JSON string of {n_node:,} characters (at most {MAX_FIELD_CHARS:,})",
                    source=source,
                    n_node=len(node),
                    MAX_FIELD_CHARS=MAX_FIELD_CHARS,
                )
            continue
        if isinstance(node, dict):
            children: list[object] = [*node.keys(), *node.values()]
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth > MAX_JSON_DEPTH:
            raise FormatError(
                "{source}: JSON nested deeper than {MAX_JSON_DEPTH} levels",
                source=source,
                MAX_JSON_DEPTH=MAX_JSON_DEPTH,
            )
        stack.extend((child, depth + 1) for child in children)


class JsonFormat:
    name = "json"
    extensions: tuple[str, ...] = ("json",)
    description = "JSON: bridge-dealer's own documented deal file"
    can_read = True
    can_write = True

    def write(self, boards: Sequence[BoardRecord], meta: ExportMeta = ExportMeta()) -> bytes:
        items: list[JsonObject] = []
        for nb in numbered(boards):
            item: JsonObject = {
                "board": nb.board,
                "dealer": nb.dealer.letter,
                "vulnerable": nb.vulnerability.value,
                "deal": nb.deal.to_pbn(Seat.N),
                "canonical": nb.deal.to_bytes().hex(),
            }
            if nb.record.tags:
                item["tags"] = dict(nb.record.tags)
            items.append(item)
        doc: JsonObject = {
            "format": FORMAT_ID,
            "version": VERSION,
            "event": meta.event,
            "site": meta.site,
            "date": meta.date,
        }
        doc["boards"] = items
        return (json.dumps(doc, ensure_ascii=False, indent=1) + "\n").encode("utf-8")

    def read(self, data: bytes, source: str = "<input>") -> ReadResult:
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise FormatError("{source}: byte {start} is not UTF-8", source=source, start=exc.start) from exc
        try:
            doc = json.loads(text, parse_int=_bounded_int, parse_constant=_no_constant)
        except json.JSONDecodeError as exc:
            raise FormatError(
                "{source}: line {lineno}, column {colno}: not valid JSON: {msg}",
                source=source,
                lineno=exc.lineno,
                colno=exc.colno,
                msg=exc.msg,
            ) from exc
        except _LimitError as exc:
            raise FormatError("{source}: {exc}", source=source, exc=exc) from exc
        except RecursionError as exc:  # deeper than the interpreter's stack: far past MAX_JSON_DEPTH
            raise FormatError(
                "{source}: JSON nested deeper than {MAX_JSON_DEPTH} levels",
                source=source,
                MAX_JSON_DEPTH=MAX_JSON_DEPTH,
            ) from exc
        _check_doc(doc, source)
        if not isinstance(doc, dict) or doc.get("format") != FORMAT_ID:
            raise FormatError(
                '{source}: not a bridge-dealer deal file ("format" must be {FORMAT_ID!r})',
                source=source,
                FORMAT_ID=FORMAT_ID,
            )
        if doc.get("version") != VERSION:
            raise FormatError(
                "{source}: version {get!r} is not supported (expected {VERSION})",
                source=source,
                get=doc.get("version"),
                VERSION=VERSION,
            )
        items = doc.get("boards")
        if not isinstance(items, list):
            raise FormatError('{source}: "boards" must be a list', source=source)
        result = ReadResult()
        for i, item in enumerate(items):
            board = item.get("board") if isinstance(item, dict) else None
            where_board = board if isinstance(board, int) else None
            try:
                if not isinstance(item, dict):
                    raise FormatError("boards[{i}] is not an object", i=i)
                if not isinstance(board, int) or isinstance(board, bool) or board < 1:
                    raise FormatError("boards[{i}].board = {board!r} must be a whole number ≥ 1", i=i, board=board)
                deal_text = item.get("deal")
                if not isinstance(deal_text, str):
                    raise FormatError("boards[{i}].deal must be a PBN deal string", i=i)
                deal = _deal_of(deal_text, item.get("canonical"), i)
                rec = law2_record(deal, board)
                dealer, vul = rec.dealer, rec.vulnerability
                if "dealer" in item:
                    text = item["dealer"]
                    if not isinstance(text, str) or text.upper() not in ("N", "E", "S", "W"):
                        raise FormatError("boards[{i}].dealer = {text!r}: expected N, E, S or W", i=i, text=text)
                    dealer = Seat("NESW".index(text.upper()))
                if "vulnerable" in item:
                    try:
                        vul = Vulnerability.parse(str(item["vulnerable"]))
                    except ValueError as exc:
                        raise FormatError("boards[{i}].vulnerable: {exc}", i=i, exc=exc) from exc
                tags = item.get("tags", {})
                if not isinstance(tags, dict) or not all(isinstance(v, str) for v in tags.values()):
                    raise FormatError("boards[{i}].tags must map names to strings", i=i)
            except DealerError as exc:
                result.problems.append(ReadProblem(str(exc), board=where_board, error=exc))
                continue
            result.records.append(BoardRecord(deal, board, dealer, vul, tags=dict(tags)))
        return result


register(JsonFormat())
