"""The director's console API (director role): bank status and seals, seal, prepare a draw, publish its
commitment on the audience display, enter the public value, run the draw, see the drawn deals, reveal, bundle.

Everything goes through ``dealer.draw.director.Director`` on the bank's own thread. Drawn deals are returned
only here, behind the director's secret; the audience gets nothing of a draw but its published commitment.
"""

from __future__ import annotations

import json
import re
from hashlib import sha256
from typing import Any

from fastapi import FastAPI, HTTPException, Request
from fastapi.responses import Response

from dealer.bank.ledger import canonical_json
from dealer.core import board_dealer, board_vulnerability
from dealer.core.cards import Seat
from dealer.core.errors import DealerError

from .auth import check_role
from .closed import CLOSED_LABEL
from .service import Service


def _body(raw: bytes) -> dict[str, Any]:
    if not raw:
        return {}
    try:
        data = json.loads(raw)
    except ValueError as exc:  # not JSON, or not even UTF-8 text (UnicodeDecodeError)
        raise HTTPException(400, f"request body is not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise HTTPException(400, "request body must be a JSON object")
    return data


def install_director_routes(app: FastAPI, service: Service) -> None:
    from dealer.bank.store import SqliteBank
    from dealer.draw.director import Director
    from dealer.draw.protocol import dice_spec, named_spec

    bank = service.bank.bank
    if not isinstance(bank, SqliteBank):  # another engine: the director's pages wait for its draw support
        return
    director = Director(bank)
    run = service.bank.call

    async def guarded(request: Request, state_changing: bool) -> dict[str, Any]:
        check_role(request, service.secrets, "director", state_changing=state_changing)
        return _body(await request.body()) if state_changing else {}

    def drawn_view(label: str) -> list[dict[str, Any]]:
        """The drawn deals as the session's boards: 1..n in draw order, Law 2 dealer and vulnerability."""
        out = []
        for number, item in enumerate(director.drawn_deals(label), start=1):
            deal = item.deal.deal
            out.append(
                {
                    "board": number,
                    "dealer": board_dealer(number).letter,
                    "vulnerability": board_vulnerability(number).pbn,
                    "deal_id": item.deal.deal_id,
                    "position": item.position,
                    "pbn": deal.to_pbn(),
                    "hands": {seat.letter: [int(c) for c in deal.hand(seat).cards] for seat in Seat},
                }
            )
        return out

    def status() -> dict[str, Any]:
        st = director.status()
        st["target"] = service.regulation.bank_target
        st["draw_available"] = True
        for d in st["draws"]:
            d["deals"] = d["n"]
            d["commitment"] = commitment_digest(d["label"])
            if d["state"] in ("drawn", "revealed"):
                d["drawn"] = drawn_view(d["label"])
        for s in st["seals"]:
            s["time"] = s["ts"]
        closed = service.closed
        st["variant"] = int(service.regulation.variant)
        if closed is not None:  # variant 1: the boards dealt closed, for files, board copies and hand records
            st["closed"] = {
                "label": CLOSED_LABEL,
                "made": closed.made,
                "total": closed.total,
                "boards": [b.view(with_deal=False) for b in closed.boards],
            }
        return st

    def commitment_digest(label: str) -> str:
        return sha256(canonical_json(director.commitment(label)["commitment"])).hexdigest()

    async def act(fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return await run(fn, *args, **kwargs)
        except DealerError as exc:
            raise HTTPException(400, str(exc)) from exc

    @app.get("/api/director/status")
    async def director_status(request: Request) -> dict[str, Any]:
        await guarded(request, False)
        result: dict[str, Any] = await act(status)
        return result

    @app.post("/api/director/seal")
    async def director_seal(request: Request) -> dict[str, Any]:
        await guarded(request, True)
        seal = await act(director.seal)
        await service.publish_ledger_head()
        return {"size": seal.size, "root": seal.root, "last_deal": seal.last_deal, "ts": seal.ts}

    @app.post("/api/director/draws")
    async def director_prepare(request: Request) -> dict[str, Any]:
        body = await guarded(request, True)
        label = str(body.get("label", ""))
        share = body.get("share")
        count = body.get("count")

        def prepare() -> dict[str, Any]:
            witnesses = body.get("witnesses")
            if isinstance(witnesses, str):
                witnesses = [w.strip() for w in witnesses.split(",") if w.strip()]
            if witnesses:
                spec = dice_spec([str(w) for w in witnesses], int(body.get("digits", 4)))
            else:
                spec = named_spec(
                    str(body.get("public_value_source") or "dice digits entered by the witnesses present")
                )
            return director.prepare(
                label,
                spec,
                share_percent=float(share) if share is not None and count is None else None,
                count=int(count) if count is not None else None,
            )

        result: dict[str, Any] = await act(prepare)
        return result

    @app.post("/api/director/draws/{label}/publish")
    async def director_publish(label: str, request: Request) -> dict[str, Any]:
        await guarded(request, True)

        def published() -> dict[str, Any]:
            doc = director.commitment(label)["commitment"]
            return {
                "label": label,
                "commitment": commitment_digest(label),
                "deals": doc["n"],
                "public_value": doc["public_value"]["description"],
            }

        msg: dict[str, Any] = await act(published)
        service.publish_commitment(msg["label"], msg["commitment"], msg["deals"], msg["public_value"])
        await service.publish_ledger_head()
        return msg

    @app.post("/api/director/draws/{label}/value")
    async def director_value(label: str, request: Request) -> dict[str, Any]:
        body = await guarded(request, True)
        dice = body.get("dice")
        named = body.get("named", body.get("public_value"))
        if dice is not None:
            value = await act(director.enter_public_value, label, dice=[str(d) for d in dice])
        else:
            value = await act(director.enter_public_value, label, named=str(named or ""))
        return {"label": label, "public_value": value}

    @app.post("/api/director/draws/{label}/run")
    async def director_run(label: str, request: Request) -> dict[str, Any]:
        body = await guarded(request, True)
        if body.get("public_value") or body.get("dice"):

            def value_then_run() -> None:
                rec = bank.get_draw(label)
                if rec.public_value is None:
                    spec = director.commitment(label)["commitment"]["public_value"]
                    if body.get("dice"):
                        director.enter_public_value(label, dice=[str(d) for d in body["dice"]])
                    elif spec["kind"] == "dice":  # one field: the witnesses' digits separated by / , or spaces
                        parts = re.split(r"[/,\s]+", str(body["public_value"]).strip())
                        director.enter_public_value(label, dice=[p for p in parts if p])
                    else:
                        director.enter_public_value(label, named=str(body["public_value"]))
                director.run(label)

            await act(value_then_run)
        else:
            await act(director.run, label)
        await service.publish_ledger_head()
        return {"label": label, "drawn": await act(drawn_view, label)}

    @app.post("/api/director/draws/{label}/reveal")
    async def director_reveal(label: str, request: Request) -> dict[str, Any]:
        await guarded(request, True)
        result: dict[str, Any] = await act(director.reveal, label)
        await service.publish_ledger_head()
        return result

    @app.get("/api/director/draws/{label}/bundle")
    async def director_bundle(label: str, request: Request) -> Response:
        await guarded(request, False)
        bundle = await act(director.bundle, label)
        return Response(
            json.dumps(bundle, indent=2, sort_keys=True),
            media_type="application/json",
            headers={
                "Content-Disposition": f'attachment; filename="bundle-{re.sub(r"[^A-Za-z0-9._-]", "_", label)}.json"'
            },
        )
