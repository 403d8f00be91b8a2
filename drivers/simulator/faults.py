"""Fault injection for the simulated dealing machine: scripted (this deal, this position) or random with a seed.

CLI syntax (``--faults``), comma separated:
  ``jam``            the next operation jams at a random position
  ``jam@3``          the 3rd operation (1-based, counted from start) jams at a random position
  ``jam@3:17``       … at position 17
  ``jam~0.05``       every operation jams with probability 0.05
  ``noise~0.01``     line noise: each frame is corrupted with probability 0.01 (both directions)
  ``garbage~5``      line noise: on average 5 junk frames inserted per real frame the machine sends
  ``no_nak``         a protocol deviation (the firmware bugs ``dealer machine conformance`` must catch):
                     ``crc_big_endian``, ``no_duplicate_detection``, ``no_nak``, ``wrong_version``; and reports
                     the host must refuse: ``seq_stuck``, ``repeated_position``, ``position_52``,
                     ``card_after_end``, ``stalls``
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from enum import Enum

from dealer.core.errors import DealerError, Phrase


class SimFault(Enum):
    JAM = "jam"
    MISFEED = "misfeed"
    UNREADABLE = "unreadable"
    DUPLICATE_READ = "duplicate_read"
    MISSING_CARD = "missing_card"
    WRONG_POCKET = "wrong_pocket"
    HOPPER_EMPTY = "hopper_empty"
    COVER_OPEN = "cover_open"
    BOARD_MISSING = "board_missing"
    POCKET_FULL = "pocket_full"
    EXTRA_CARD = "extra_card"
    POWER_LOSS = "power_loss"
    CABLE_PULLED = "cable_pulled"


class ProtocolQuirk(Enum):
    """Deliberate deviations from PROTOCOL.md, to prove the conformance tester catches them."""

    CRC_BIG_ENDIAN = "crc_big_endian"  # the CRC is sent most significant byte first
    NO_DUPLICATE_DETECTION = "no_duplicate_detection"  # a retransmitted command is acted on again
    NO_NAK = "no_nak"  # refused frames are dropped silently instead of NAKed
    WRONG_VERSION = "wrong_version"  # HELLO_REPLY picks version 2 whatever the host speaks
    # devices that report what no deal can hold (the host must void the deal, naming why)
    SEQ_STUCK = "seq_stuck"  # sequence numbers stick at 255 instead of wrapping to 0 (until the next HELLO)
    REPEATED_POSITION = "repeated_position"  # the 11th card is reported with the 10th card's position
    POSITION_52 = "position_52"  # a 53rd CARD_READ, at position 52, before DEAL_END
    CARD_AFTER_END = "card_after_end"  # a CARD_READ (position 51 again) after DEAL_END
    STALLS = "stalls"  # the mechanism stops after 20 cards and says nothing more (the link stays alive)
    # deviations of the link the conformance tester must catch (issue 30's broken devices)
    ACK_BAD_CRC = "ack_bad_crc"  # a frame with a bad CRC is ACKed (the seq taken from its untrusted header)
    LATE_ANSWER = "late_answer"  # everything the device sends leaves 400 ms late (ACK/NAK after 50 ms, §5.4)
    BAD_FIELD_FIRST = "bad_field_first"  # START_DEAL with deal_id none gets BAD_FIELD even while dealing
    DATA_BEFORE_ACK = "data_before_ack"  # a request's data (DEVICE_INFO, STATUS, DEAL_START) goes before its ACK
    DROPS_WHEN_BUSY = "drops_when_busy"  # no queue, no pause: a CARD_READ while one is in flight is lost
    BAD_SERIAL = "bad_serial"  # DEVICE_INFO's serial has a 0x00 before a printable byte (a bad str16)
    WRONG_DEAL_ID = "wrong_deal_id"  # the 6th CARD_READ names the next deal id, not the one dealt
    RESUMES = "resumes"  # a deal cut by a lost session goes on after the next HELLO
    NO_BUSY = "no_busy"  # its queue is the deal's while dealing: GET_STATUS is ACKed, its STATUS lost (no BUSY)


class FaultSpecError(DealerError, ValueError):
    pass


@dataclass(frozen=True, slots=True)
class ScriptedFault:
    kind: SimFault
    operation: int | None = None  # 1-based operation ordinal; None = the next operation
    position: int | None = None  # 0..51; None = drawn from the seeded RNG


@dataclass(slots=True)
class NoiseConfig:
    corrupt_rate: float = 0.0  # probability that a real frame is damaged (bit flip, dropped or inserted byte)
    garbage_per_frame: float = 0.0  # mean number of junk frames inserted after each real frame sent
    duplicate_rate: float = 0.0  # probability that a real frame is sent twice

    @property
    def active(self) -> bool:
        return self.corrupt_rate > 0 or self.garbage_per_frame > 0 or self.duplicate_rate > 0


@dataclass(slots=True)
class FaultPlan:
    scripted: list[ScriptedFault] = field(default_factory=list)
    rates: dict[SimFault, float] = field(default_factory=dict)
    noise: NoiseConfig = field(default_factory=NoiseConfig)
    quirks: set[ProtocolQuirk] = field(default_factory=set)
    seed: int | None = None
    rng: random.Random = field(init=False)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    def inject(self, kind: SimFault, operation: int | None = None, position: int | None = None) -> None:
        self.scripted.append(ScriptedFault(kind, operation, position))

    def draw(self, operation: int) -> tuple[SimFault, int] | None:
        """The fault (and position) for the given 1-based operation, if any; consumes scripted entries."""
        for i, f in enumerate(self.scripted):
            if f.operation is None or f.operation == operation:
                del self.scripted[i]
                return f.kind, f.position if f.position is not None else self._position(f.kind)
        for kind, rate in self.rates.items():
            if rate > 0 and self.rng.random() < rate:
                return kind, self._position(kind)
        return None

    def _position(self, kind: SimFault) -> int:
        low = 1 if kind is SimFault.DUPLICATE_READ else 0
        return self.rng.randint(low, 51)


def parse_faults(text: str, seed: int | None = None) -> FaultPlan:
    plan = FaultPlan(seed=seed)
    for n, item in enumerate(t.strip() for t in text.split(",")):
        if not item:
            continue
        where = Phrase("--faults item {n} {item!r}", n=n + 1, item=item)
        name, _, rest = item.partition("~") if "~" in item else item.partition("@")
        name = name.strip().lower().replace("-", "_")
        if name in ("noise", "garbage", "duplicate"):
            if "~" not in item:
                raise FaultSpecError("{where}: {name} needs a rate, e.g. {name}~0.01", where=where, name=name)
            value = _number(rest, where)
            if name == "noise":
                plan.noise.corrupt_rate = _probability(value, where)
            elif name == "duplicate":
                plan.noise.duplicate_rate = _probability(value, where)
            else:
                if value < 0 or value > 1000:
                    raise FaultSpecError(
                        "{where}: junk frames per frame {value} not in 0..1000", where=where, value=value
                    )
                plan.noise.garbage_per_frame = value
            continue
        if name in {q.value for q in ProtocolQuirk}:
            plan.quirks.add(ProtocolQuirk(name))
            continue
        try:
            kind = SimFault(name)
        except ValueError:
            allowed = ", ".join(
                [k.value for k in SimFault] + ["noise", "garbage", "duplicate"] + [q.value for q in ProtocolQuirk]
            )
            raise FaultSpecError(
                "{where}: unknown fault {name!r}; allowed: {allowed}", where=where, name=name, allowed=allowed
            ) from None
        if "~" in item:
            plan.rates[kind] = _probability(_number(rest, where), where)
        elif rest:
            op_text, _, pos_text = rest.partition(":")
            op = int(_number(op_text, where))
            if op < 1:
                raise FaultSpecError("{where}: operation {op} must be ≥ 1", where=where, op=op)
            pos = None
            if pos_text:
                pos = int(_number(pos_text, where))
                if not 0 <= pos <= 51:
                    raise FaultSpecError("{where}: position {pos} not in 0..51", where=where, pos=pos)
            plan.inject(kind, op, pos)
        else:
            plan.inject(kind)
    return plan


def _number(text: str, where: Phrase) -> float:
    try:
        return float(text)
    except ValueError:
        raise FaultSpecError("{where}: {text!r} is not a number", where=where, text=text) from None


def _probability(value: float, where: Phrase) -> float:
    if not 0 <= value <= 1:
        raise FaultSpecError("{where}: probability {value} not in 0..1", where=where, value=value)
    return value
