"""The compact form of an imported deal: its ledger entry is not stored, it is rebuilt from the deal's row. Pure.

A bank wrote each deal of a bulk import (``bulk.import_canonical``) in this form as a row of ``deals`` (bank format
2); from format 3 the batch's rows are packed into one row of ``batches`` (``batches``, ``packed``) and read back
as these rows, and a deals row of this form is what a batch's deal gets when it leaves the bank. The batch's
deals take the ledger indices just before the ``import`` entry that closes the batch, and their deal ids run
``first_deal … last_deal`` of that entry; the ``ledger`` table holds no row for them: a run of missing indices
closed by an ``import`` entry is such a batch. Each deal's ledger entry is exactly

    {"d":{"c":hex(H(salt ‖ deal)),"id":ID,"src":SRC},"i":INDEX,"k":"deal","prev":PREV,"ts":TS}

(canonical JSON, as every entry), where ``TS`` is the closing ``import`` entry's time, ``PREV`` the previous
entry's hash and ``SRC`` references the batch instead of repeating the file's name and SHA-256:
``{"batch": index of the import entry, "board": B, "file_index": position of the file in that entry's "files",
"kind": "import", "line": L, "shown": 0}`` (``board`` and ``line`` left out when unknown). These entries are hashed,
chained, sealed and proved (bundle, Merkle proofs) like any other: only their storage differs.

The deal's row keeps what no one else knows: the cards, the salt, and ``source`` = ``"F,B,L"`` (file position,
board, line, each empty when unknown; a JSON source always starts with ``{``). Its ``commitment`` is ``b""`` and
its ``created`` ``""``: both are recomputed (from the salt and cards; from the batch's entry).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from dealer.core.json_types import JsonObject

from .errors import BankError

FORMAT = 2  # the bank format (``meta.schema``) from which compact deals may be stored
EMPTY_COMMITMENT = b""
EMPTY_CREATED = ""

# the ledger entry of a deal up to its ``prev`` value: % (commitment hex, deal id, source JSON, index)
ENTRY_HEAD = '{"d":{"c":"%s","id":%d,"src":%s},"i":%d,"k":"deal","prev":"'


def entry_tail(ts_json: str) -> str:
    return f'","ts":{ts_json}}}'


_SOURCE = re.compile(r"(0|[1-9][0-9]*),(0|[1-9][0-9]*)?,(0|[1-9][0-9]*)?", re.ASCII)


def is_compact(source: str) -> bool:
    """Whether a deals row's ``source`` is the compact ``"F,B,L"`` (not canonical JSON)."""
    return not source.startswith("{")


def compact_source(file_index: int, board: int | None, line: int | None) -> str:
    """The ``source`` column of a compact deal: ``"F,B,L"``."""
    return f"{file_index:d},{'' if board is None else f'{board:d}'},{'' if line is None else f'{line:d}'}"


def parse_source(source: str) -> tuple[int, int | None, int | None]:
    """``(file position, board, line)`` of a compact ``source``; ``BankError`` unless it is exactly that form."""
    parts = _SOURCE.fullmatch(source)
    if parts is None:
        raise BankError("compact source {source!r} is not F,B,L (decimal numbers, the first required)", source=source)
    position, board, line = parts.groups()
    return int(position), None if board is None else int(board), None if line is None else int(line)


def src_json(batch: int, source: str) -> str:
    """The canonical JSON of a compact deal's public source (keys in sorted order: batch, board, file_index, kind,
    line, shown); ``source`` as written by ``compact_source`` (checked by ``parse_source`` when read back)."""
    position, board, line = source.split(",")
    board_part = f',"board":{board}' if board else ""
    line_part = f',"line":{line}' if line else ""
    return f'{{"batch":{batch:d}{board_part},"file_index":{position},"kind":"import"{line_part},"shown":0}}'


def public_source(batch: int, source: str) -> JsonObject:
    """A compact deal's public source as an object (what ``src_json`` spells)."""
    position, board, line = parse_source(source)
    out: JsonObject = {"batch": batch, "file_index": position, "kind": "import", "shown": 0}
    if board is not None:
        out["board"] = board
    if line is not None:
        out["line"] = line
    return out


def entry_body(index: int, ts_json: str, prev: str, commitment: bytes, deal_id: int, src: str) -> bytes:
    """A compact deal's ledger entry bytes (what ``Entry(index, "deal", ts, prev, data).encode()`` gives)."""
    return (ENTRY_HEAD % (commitment.hex(), deal_id, src, index) + prev + entry_tail(ts_json)).encode()


def expand(
    first_index: int,
    prev: str,
    ts_json: str,
    batch: int,
    # Any: sqlite3/psycopg rows (deal_id, ledger_index, canonical, salt, source); typed as each value is read
    rows: Sequence[Sequence[Any]],
) -> list[tuple[int, bytes, bytes]]:
    """The ledger entries ``(index, body, hash)`` of a compact batch's deals, ``rows`` in id order, the first at
    ``first_index`` after an entry hashing to ``prev``. ``BankError`` when a row is not where the run needs it."""
    from hashlib import sha256  # here: reading the bank's counts (``dealer bank status``) loads no OpenSSL

    out: list[tuple[int, bytes, bytes]] = []
    tail = entry_tail(ts_json)
    batch_part = f'{{"batch":{batch:d}'
    index = first_index
    for deal_id, ledger_index, canonical, salt, source in rows:
        parts = _SOURCE.fullmatch(source) if isinstance(source, str) else None
        if ledger_index != index or parts is None:
            if ledger_index == index and isinstance(source, str) and is_compact(source):
                parse_source(source)  # names what is wrong with it
            raise BankError(
                "ledger entry {index} is missing: deal {deal_id} is not a compact deal of the batch closed by "
                "entry {batch}",
                index=index,
                deal_id=deal_id,
                batch=batch,
            )
        position, board, line = parts.groups()
        src = (
            batch_part
            + ("" if board is None else ',"board":' + board)
            + ',"file_index":'
            + position
            + ',"kind":"import"'
            + ("" if line is None else ',"line":' + line)
            + ',"shown":0}'
        )
        com = sha256(bytes(salt) + bytes(canonical)).hexdigest()
        text = f'{{"d":{{"c":"{com}","id":{deal_id:d},"src":{src}}},"i":{index:d},"k":"deal","prev":"{prev}{tail}'
        body = text.encode()
        digest = sha256(body).digest()
        out.append((index, body, digest))
        prev = digest.hex()
        index += 1
    return out
