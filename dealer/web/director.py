"""The director's console API (director role): bank status and seals, seal, prepare a draw, publish its
commitment on the audience display, enter the public value, run the draw, see the drawn deals, reveal, bundle.

Everything goes through ``dealer.draw.director.Director`` on the bank's own thread. Drawn deals are returned
only here, behind the director's secret; the audience gets nothing of a draw but its published commitment.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from hashlib import sha256
from typing import Any, TypeVar

from fastapi import Depends, FastAPI, HTTPException
from fastapi.responses import Response

from dealer.bank.ledger import canonical_json
from dealer.core.cards import Seat
from dealer.core.errors import DealerError

from .auth import role_check
from .models import (
    DirectorStatus,
    Drawn,
    DrawnDealView,
    LabelParam,
    Prepared,
    PrepareDraw,
    PublicValue,
    Published,
    Revealed,
    RunDraw,
    SealView,
    ValueEntered,
)
from .service import Service

T = TypeVar("T")


def install_director_routes(app: FastAPI, service: Service) -> None:
    from dealer.bank.store import SqliteBank
    from dealer.draw.director import Director
    from dealer.draw.protocol import dice_spec, named_spec

    bank = service.bank.bank
    if not isinstance(bank, SqliteBank):  # another engine: the director's pages wait for its draw support
        return
    director = Director(bank)
    run = service.bank.call

    read = [Depends(role_check(service.secrets, "director", state_changing=False))]
    write = [Depends(role_check(service.secrets, "director", state_changing=True))]

    def drawn_view(label: str) -> list[DrawnDealView]:
        out = []
        for item in director.drawn_deals(label):
            deal = item.deal.deal
            out.append(
                DrawnDealView(
                    deal_id=item.deal.deal_id,
                    position=item.position,
                    pbn=deal.to_pbn(),
                    hands={seat.letter: [int(c) for c in deal.hand(seat).cards] for seat in Seat},
                )
            )
        return out

    def status() -> DirectorStatus:
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
        return DirectorStatus.model_validate(st)

    def commitment_digest(label: str) -> str:
        return sha256(canonical_json(director.commitment(label)["commitment"])).hexdigest()

    async def act(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        try:
            return await run(fn, *args, **kwargs)
        except DealerError as exc:
            raise HTTPException(400, str(exc)) from exc

    @app.get("/api/director/status", response_model=DirectorStatus, dependencies=read)
    async def director_status() -> DirectorStatus:
        return await act(status)

    @app.post("/api/director/seal", response_model=SealView, dependencies=write)
    async def director_seal() -> SealView:
        seal = await act(director.seal)
        return SealView(index=seal.ledger_index, size=seal.size, root=seal.root, last_deal=seal.last_deal, ts=seal.ts)

    @app.post("/api/director/draws", response_model=Prepared, dependencies=write)
    async def director_prepare(body: PrepareDraw) -> Prepared:

        def prepare() -> Prepared:
            witnesses = body.witness_names()
            if witnesses:
                spec = dice_spec(witnesses, body.digits)
            else:
                spec = named_spec(body.public_value_source or "dice digits entered by the witnesses present")
            return Prepared.model_validate(
                director.prepare(
                    body.label,
                    spec,
                    share_percent=body.share if body.count is None else None,
                    count=body.count,
                )
            )

        return await act(prepare)

    @app.post("/api/director/draws/{label}/publish", response_model=Published, dependencies=write)
    async def director_publish(label: LabelParam) -> Published:

        def published() -> Published:
            doc = director.commitment(label)["commitment"]
            return Published(
                label=label,
                commitment=commitment_digest(label),
                deals=doc["n"],
                public_value=doc["public_value"]["description"],
            )

        msg = await act(published)
        service.publish_commitment(msg.label, msg.commitment, msg.deals, msg.public_value)
        return msg

    @app.post("/api/director/draws/{label}/value", response_model=ValueEntered, dependencies=write)
    async def director_value(label: LabelParam, body: PublicValue) -> ValueEntered:
        if body.dice is not None:
            value = await act(director.enter_public_value, label, dice=body.dice)
        else:
            value = await act(director.enter_public_value, label, named=body.named or body.public_value or "")
        return ValueEntered(label=label, public_value=value)

    @app.post("/api/director/draws/{label}/run", response_model=Drawn, dependencies=write)
    async def director_run(label: LabelParam, body: RunDraw | None = None) -> Drawn:
        if body is not None and (body.public_value or body.dice):
            given = body

            def value_then_run() -> None:
                rec = bank.get_draw(label)
                if rec.public_value is None:
                    spec = director.commitment(label)["commitment"]["public_value"]
                    if given.dice:
                        director.enter_public_value(label, dice=given.dice)
                    elif spec["kind"] == "dice":  # one field: the witnesses' digits separated by / , or spaces
                        parts = re.split(r"[/,\s]+", str(given.public_value).strip())
                        director.enter_public_value(label, dice=[p for p in parts if p])
                    else:
                        director.enter_public_value(label, named=str(given.public_value))
                director.run(label)

            await act(value_then_run)
        else:
            await act(director.run, label)
        return Drawn(label=label, drawn=await act(drawn_view, label))

    @app.post("/api/director/draws/{label}/reveal", response_model=Revealed, dependencies=write)
    async def director_reveal(label: LabelParam) -> Revealed:
        return Revealed.model_validate(await act(director.reveal, label))

    @app.get(
        "/api/director/draws/{label}/bundle",
        dependencies=read,
        response_class=Response,
        responses={200: {"content": {"application/json": {"schema": {"type": "object"}}}}},
    )
    async def director_bundle(label: LabelParam) -> Response:
        bundle = await act(director.bundle, label)
        return Response(
            json.dumps(bundle, indent=2, sort_keys=True),
            media_type="application/json",
            headers={
                "Content-Disposition": f'attachment; filename="bundle-{re.sub(r"[^A-Za-z0-9._-]", "_", label)}.json"'
            },
        )
