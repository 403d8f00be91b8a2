"""The director's console as the application layer answers it, framework-free: the status (plan, target, each
draw's commitment digest and published flag, the drawn deals as the session's boards, variant 1's closed boards),
the drawn deals numbered by Law 2, and the chief judge's custody steps (its state as a browser sees it, set up,
unlock). Everything here runs on the bank's thread (``service.bank.call``); the HTTP side (roles, cookies, the
loopback-or-HTTPS check, status codes, Retry-After) is ``dealer.web.director``'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel

from dealer.app.closed import CLOSED_LABEL
from dealer.app.custody import CustodyState
from dealer.app.draws import drawn_boards
from dealer.core.cards import Seat
from dealer.core.errors import DealerError
from dealer.core.json_types import JsonObject
from dealer.custody import CustodyError, CustodyLockedError, Keyring, check_passphrase, create_record, unlock_record
from dealer.custody.files import plain_key, read_record, record_path, remove_plain_key, write_record

if TYPE_CHECKING:
    from dealer.app.service import Service
    from dealer.bank.repository import BankRepository
    from dealer.bank.seals import Seal
    from dealer.draw.director import Director


class DrawnBoard(BaseModel):
    """A drawn deal as the session's board: number, Law 2 dealer (N/E/S/W) and vulnerability (PBN's None/NS/EW/All),
    its bank id and pick position, its PBN deal and each seat's cards. The director's console gets it as it is
    (``dealer.web.models``: the status's draws and a run's answer)."""

    board: int
    dealer: str
    vulnerability: str
    deal_id: int
    position: int
    pbn: str
    hands: dict[str, list[int]]


def drawn_view(director: Director, label: str) -> list[DrawnBoard]:
    """The drawn deals of ``label`` as the session's boards: 1..n in draw order, Law 2 dealer and vulnerability."""
    drawn = director.drawn_deals(label)
    return [
        DrawnBoard(
            board=board.number,
            dealer=board.dealer.letter,
            vulnerability=board.vulnerability.pbn,
            deal_id=item.deal.deal_id,
            position=item.position,
            pbn=board.deal.to_pbn(),
            hands={seat.letter: [int(c) for c in board.deal.hand(seat).cards] for seat in Seat},
        )
        for board, item in zip(drawn_boards(drawn), drawn, strict=True)
    ]


def commitment_digest(director: Director, label: str) -> str:
    """The SHA-256 (hex) of the draw's commitment as canonical JSON: the hash the hall is shown."""
    from dealer.draw.protocol import commitment_hash

    return commitment_hash(director.commitment(label)["commitment"])


def console_status(service: Service) -> JsonObject:
    """The director's status (``dealer.web.models.DirectorStatus``'s fields): the bank's and each draw's state with
    its commitment digest and published flag, the drawn deals once they may be shown (revealed, or drawn while the
    key is unlocked), the regulation's target and plan, and variant 1's closed boards (without their cards)."""
    director = service.director
    bank = service.bank.bank
    st = director.status()
    st["target"] = service.regulation.bank_target
    st["plan"] = director.plan(service.regulation)
    st["draw_available"] = True
    for d in st["draws"]:
        label = d["label"]
        d["deals"] = d["n"]
        d["commitment"] = commitment_digest(director, label)
        d["published"] = bank.draw_published(label)
        if d["state"] == "revealed" or (d["state"] == "drawn" and bank.unlocked):
            d["drawn"] = [b.model_dump() for b in drawn_view(director, label)]
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


def altered_value(service: Service, label: str) -> DealerError | None:
    """Before a draw runs: the refusal when the public value in the bank is not the one the hall was shown (the
    database edited after the witnesses' V was shown), else None. On the bank's thread."""
    shown = service.shown_values.get(label)
    stored = service.bank.bank.get_draw(label).public_value
    if shown is None or stored == shown:
        return None
    return DealerError(
        "draw {label!r}: the public value in the bank ({stored}) is not the one the hall was shown ({shown}): "
        "the bank was altered; nothing was drawn; verify the bank",
        label=label,
        stored=stored,
        shown=shown,
    )


# -- the chief judge's custody ----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class CustodyStatus:
    """The key as one browser sees it; ``public_key`` once a custody record exists."""

    state: CustodyState
    public_key: str | None = None


def custody_status(bank: BankRepository, holds: bool) -> CustodyStatus:
    """Not set up (no record), locked, unlocked for this browser (``holds``), or unlocked for another one."""
    try:
        record = read_record(bank.key_dir)
    except CustodyLockedError:
        return CustodyStatus(CustodyState.NONE)
    if not bank.key_loaded:
        return CustodyStatus(CustodyState.LOCKED, record.public_key)
    return CustodyStatus(CustodyState.UNLOCKED if holds else CustodyState.ELSEWHERE, record.public_key)


def unlock_custody(bank: BankRepository, passphrase: str) -> None:
    """Open the custody record with the passphrase and load its key into the bank (a wrong passphrase raises
    ``CustodyError``; no record raises ``CustodyLockedError``)."""
    bank.unlock(unlock_record(read_record(bank.key_dir), passphrase))


class CustodyExists(CustodyError):
    """A custody record is there already (``path``): it is unlocked, or its passphrase changed, never made again."""

    def __init__(self, path: Path) -> None:
        super().__init__("the custody is set up already: unlock it with its passphrase")
        self.path = path


class SealsSignedElsewhere(CustodyError):
    """The bank's seals are signed by a key (``public_key``) whose plain file is not in the key directory."""

    def __init__(self, public_key: str) -> None:
        super().__init__("the bank's seals are signed by a key that is not here: set the custody up with the "
                         "bank's key directory")  # fmt: skip
        self.public_key = public_key


def adoptable_key(key_dir: Path, latest: Seal | None) -> Keyring | None:
    """The key a new custody record in ``key_dir`` is to seal: the bank's plain key file when there is one (None: a
    new key is made). Refused when the record exists already, or when the bank has seals (``latest``) and the key
    that signed them is not the plain file's."""
    if record_path(key_dir).exists():
        raise CustodyExists(record_path(key_dir))
    adopted = plain_key(key_dir)
    if latest is not None and (adopted is None or adopted.public_key != latest.public_key):
        raise SealsSignedElsewhere(latest.public_key)
    return adopted


def seal_key(key_dir: Path, adopted: Keyring | None, passphrase: str) -> tuple[Keyring, Path]:
    """Write the custody record of ``adopted`` (else of a new key) under ``passphrase`` (checked already), then
    delete the adopted plain key file: the key and the record's path."""
    keyring = adopted or Keyring.generate()
    path = write_record(key_dir, create_record(keyring, passphrase))
    if adopted is not None:
        remove_plain_key(key_dir)
    return keyring, path


def set_up_custody(bank: BankRepository, passphrase: str) -> Keyring:
    """The console's set-up: the custody record under ``passphrase`` (``adoptable_key``, ``seal_key``), and its key
    loaded into the bank."""
    adopted = adoptable_key(bank.key_dir, bank.latest_seal())
    keyring, _ = seal_key(bank.key_dir, adopted, check_passphrase(passphrase))
    bank.unlock(keyring)
    return keyring
