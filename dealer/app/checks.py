"""The technical judge's equipment checks as the service records them: the judge gives the session, phase, outcome
and a note; the figures are the station's own (its device, its health, a camera's calibration). The web's judge
console calls these; ``dealer.documents.acts`` makes the ledger payload and the act.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dealer.core.errors import DealerError
from dealer.core.json_types import JsonObject

if TYPE_CHECKING:
    from pathlib import Path

    from dealer.app.service import Service


def station_calibration(path: Path | None) -> dict[str, str | float] | None:
    """A camera station's calibration file, the date it was made (its own ``created``, else the file's) and the
    per-card error rate its held-out readings predict (#31), where the file has one."""
    if path is None:
        return None
    created = ""
    predicted: dict[str, str | float] = {}
    try:
        from drivers.camera.calibration import Calibration, CalibrationError

        cal = Calibration.load(path)
        created = cal.created
        if cal.confidence is not None:
            predicted["predicted_error_rate"] = cal.confidence.predicted_error_rate
    except (ImportError, OSError, CalibrationError):
        pass
    if not created:
        from datetime import UTC, datetime

        try:
            created = datetime.fromtimestamp(path.stat().st_mtime, UTC).isoformat(timespec="seconds")
        except OSError:
            created = ""
    return {"file": str(path), "created": created, **predicted}


def equipment_check_payload(
    service: Service, station_name: str, session: str, phase: str, outcome: str, note: str
) -> JsonObject:
    """The ledger payload of one equipment check of ``station_name``, its figures read from the station now
    (a station the service does not have is refused)."""
    from dealer.documents.acts import equipment_check

    station = service.stations.get(station_name)
    if station is None:
        raise _no_station(service, station_name)
    state = station.state()
    return equipment_check(
        session,
        phase,
        station.name,
        outcome,
        state.get("device"),
        state.get("health", {}),
        station_calibration(station.config.calibration),
        note,
    )


def equipment_override_payload(service: Service, station_name: str, reason: str) -> JsonObject:
    """The ledger payload of the chief judge's leave to start ``station_name`` without today's "before" check."""
    from dealer.documents.acts import equipment_override

    if station_name not in service.stations:
        raise _no_station(service, station_name)
    return equipment_override(station_name, reason)


def _no_station(service: Service, name: str) -> DealerError:
    return DealerError("station: no station {name!r} ({stations})", name=name, stations=", ".join(service.stations))
