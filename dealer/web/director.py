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
from dealer.core.cards import Seat
from dealer.core.errors import DealerError

from .auth import check_role
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
    from dealer.draw.protocol import DrawError, dice_spec, named_spec

    bank = service.bank.bank
    if not isinstance(bank, SqliteBank):  # another engine: the director's pages wait for its draw support
        return
    director = Director(bank)
    run = service.bank.call

    async def guarded(request: Request, state_changing: bool) -> dict[str, Any]:
        check_role(request, service.secrets, "director", state_changing=state_changing)
        return _body(await request.body()) if state_changing else {}

    def drawn_view(label: str) -> list[dict[str, Any]]:
        out = []
        for item in director.drawn_deals(label):
            deal = item.deal.deal
            out.append(
                {
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
        st["plan"] = director.plan(service.regulation)
        st["draw_available"] = True
        for d in st["draws"]:
            d["deals"] = d["n"]
            d["commitment"] = commitment_digest(d["label"])
            d["published"] = bank.draw_published(d["label"])
            if d["state"] in ("drawn", "revealed"):
                d["drawn"] = drawn_view(d["label"])
        for s in st["seals"]:
            s["time"] = s["ts"]
        return st

    def commitment_digest(label: str) -> str:
        return sha256(canonical_json(director.commitment(label)["commitment"])).hexdigest()

    async def act(fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return await run(fn, *args, **kwargs)
        except DealerError as exc:
            raise HTTPException(400, str(exc)) from exc

    async def to_hall(label: str) -> None:
        view: dict[str, Any] = await act(director.hall_view, label)
        service.publish_commitment(view)

    @app.get("/api/director/status")
    async def director_status(request: Request) -> dict[str, Any]:
        await guarded(request, False)
        result: dict[str, Any] = await act(status)
        return result

    @app.post("/api/director/seal")
    async def director_seal(request: Request) -> dict[str, Any]:
        await guarded(request, True)
        seal = await act(director.seal)
        target = service.regulation.bank_target
        out = {"size": seal.size, "root": seal.root, "last_deal": seal.last_deal, "ts": seal.ts}
        if seal.last_deal < target:
            out["warning"] = (
                f"sealed {seal.last_deal} deals, below the regulation's target of {target} "
                f"({service.regulation.plan_text()}): a draw from this bank needs the director's override"
            )
        return out

    def _int_field(body: dict[str, Any], key: str, default: int) -> int:
        value = body.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int):
            raise DrawError(f"{key} = {value!r} must be a whole number")
        return value

    @app.post("/api/director/draws")
    async def director_prepare(request: Request) -> dict[str, Any]:
        body = await guarded(request, True)
        label = str(body.get("label", ""))

        def prepare() -> dict[str, Any]:
            witnesses = body.get("witnesses")
            if isinstance(witnesses, str):
                witnesses = [w.strip() for w in witnesses.split(",") if w.strip()]
            if witnesses:
                spec = dice_spec(
                    [str(w) for w in witnesses], _int_field(body, "rolls", 8), _int_field(body, "faces", 6)
                )
            else:
                spec = named_spec(
                    str(body.get("named") or ""),
                    _int_field(body, "numbers", 0),
                    _int_field(body, "min", 1),
                    _int_field(body, "max", 0),
                    body.get("width") if isinstance(body.get("width"), int) else None,
                    "as drawn" if body.get("as_drawn") else "ascending",
                    not body.get("repeats"),
                    str(body.get("separator") or "-"),
                )
            override = body.get("override")
            return director.prepare(
                label,
                spec,
                service.regulation,
                replacement=bool(body.get("replacement")),
                override=str(override) if override else None,
            )

        result: dict[str, Any] = await act(prepare)
        return result

    @app.post("/api/director/draws/{label}/publish")
    async def director_publish(label: str, request: Request) -> dict[str, Any]:
        await guarded(request, True)
        view: dict[str, Any] = await act(director.publish, label)
        service.publish_commitment(view)  # recorded in the ledger first, then on the audience display
        return view

    def enter_value(label: str, body: dict[str, Any]) -> str:
        rec = bank.get_draw(label)
        if rec.public_value is not None:
            return rec.public_value
        spec = director.commitment(label)["commitment"]["public_value"]
        dice = body.get("dice")
        typed = body.get("public_value", body.get("named"))
        if dice is not None:
            if not isinstance(dice, list):
                raise DrawError("dice must be a list of the witnesses' digits")
            return director.enter_public_value(label, dice=[str(d) for d in dice])
        if spec["kind"] == "dice":  # one field: every witness's digits in order, spaces or separators allowed
            return director.enter_public_value(label, dice=[str(typed or "")])
        return director.enter_public_value(label, named=str(typed or ""))

    @app.post("/api/director/draws/{label}/value")
    async def director_value(label: str, request: Request) -> dict[str, Any]:
        body = await guarded(request, True)
        if body.get("check"):  # show the canonical form back without storing it
            typed = body.get("dice") or body.get("public_value", body.get("named"))
            spec = await act(lambda: director.commitment(label)["commitment"]["public_value"])
            if spec["kind"] == "dice":
                dice = typed if isinstance(typed, list) else [str(typed or "")]
                value = await act(director.normalise, label, dice=[str(d) for d in dice])
            else:
                value = await act(director.normalise, label, named=str(typed or ""))
            return {"label": label, "public_value": value, "stored": False}
        value = await act(enter_value, label, body)
        await to_hall(label)
        return {"label": label, "public_value": value, "stored": True}

    @app.post("/api/director/draws/{label}/void")
    async def director_void(label: str, request: Request) -> dict[str, Any]:
        body = await guarded(request, True)
        data: dict[str, Any] = await act(director.void, label, str(body.get("reason", "")))
        await to_hall(label)
        return {"label": label, "reason": data["void"]["reason"]}

    @app.post("/api/director/draws/{label}/run")
    async def director_run(label: str, request: Request) -> dict[str, Any]:
        body = await guarded(request, True)
        if body.get("public_value") or body.get("dice"):
            await act(enter_value, label, body)
            await to_hall(label)
        await act(director.run, label)
        await to_hall(label)  # the hall learns that the draw has run; nothing of what it drew
        return {"label": label, "drawn": await act(drawn_view, label)}

    @app.post("/api/director/draws/{label}/reveal")
    async def director_reveal(label: str, request: Request) -> dict[str, Any]:
        await guarded(request, True)
        result: dict[str, Any] = await act(director.reveal, label)
        await to_hall(label)
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
