"""The technical judge's console commands as the service answers them, framework-free: ``devices`` and ``state``
read the service, any other command is a station action (``Service.judge_command``). The web's WebSocket parses a
command and renders the answer (or the refusal) in the console's language.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dealer.app.operator_messages import CommandOk, Devices, JudgeAction, OperatorMessage, StationAction

if TYPE_CHECKING:
    from dealer.app.service import Service


async def answer_command(
    service: Service, cmd: str, station: str | None, ident: int | str | None, args: JudgeAction
) -> OperatorMessage:
    """The answer to one console command: the devices, the whole state, or ``ok`` once the station action ran
    (a refused action raises ``StationError``, ``DealerError`` or ``ValueError``)."""
    if cmd == "devices":
        return Devices(devices=service.devices())
    if cmd == "state":
        return service.judge_state()
    await service.judge_command(str(station), StationAction(cmd), args)
    return CommandOk(cmd=cmd, id=ident)
