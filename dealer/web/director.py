"""The director's console API (director role): bank status, seal, draw, reveal, bundle."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request

from .auth import check_role
from .service import Service


def install_director_routes(app: FastAPI, service: Service) -> None:
    @app.get("/api/director/status")
    async def director_status(request: Request) -> dict[str, Any]:
        check_role(request, service.secrets, "director", state_changing=False)
        bank = service.bank.bank
        return {
            "deals": await service.bank.call(bank.deal_count),
            "ledger_head": await service.bank.call(bank.ledger_head),
            "target": service.regulation.bank_target,
        }
