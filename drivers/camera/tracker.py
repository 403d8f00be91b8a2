"""From per-frame readings to card events: one event per card shown.

A card counts once it has been read the same over ``stable_frames`` consecutive frames while lying still
(moving frames, partial views at the frame edge and anything that is not a face break the run). It stays
"the card in view" until ``gap_frames`` frames show no card, or another card is read stably (a replacement
without a gap: a new event). An object that lay still for ``unreadable_frames`` frames (whatever each frame
read) without being read stably becomes one unreadable event when it goes (or is replaced): reported late,
but never followed by a second event for the same card, since the dealing session voids a deal on an
unreadable card.

What a deck guarantees is used (#31). Each card occurs once in a deal: a card read a second time is judged
again on all the frames of the object in view, with the cards already dealt left out; where that evidence
nearly ties with another, undealt card, the deal decides for it, else the second copy is reported as read (a
foreign card: the dealing session voids the deal as a duplicate). A card-shaped object lying still that is no
face of the deck is never silent: mostly dark print (a back, or a card of another deck, face down) is a fault,
anything else (a face dimmed past recognition, a joker) is an unreadable card.

A card lying still against the frame's edge whose outline is cut short in some frames (its edge in the frame's
last pixels) stays the same still object through those frames: they tell nothing of its face but do not break
its stillness. A card lying still but cut by the frame's edge (partly outside the camera's view) is never read and never
silent either (#31): when it goes without having been pushed wholly into view (and read there), it is reported
as a fault naming the edge, so the judge sees which card the camera could not see. A card already reported (or
waiting to be) that is slid out past the edge and pauses there is that card leaving, not a new one.

Frames of one still object are also read together: with a ``judge`` (the recogniser's decision rule), the
per-frame evidence of the frames it has lain still since it was last read as the card already reported is
averaged and judged once more each frame. Noise and a glare that moves with the hand differ from frame to
frame, so the average often reads a card that no single frame read three times in a row; and it tells a new
card laid exactly where the last one lay (no empty frame between) from the last card dimmed by a glare.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import cv2
import numpy as np

from dealer.core.cards import Card
from dealer.core.events import CardSeen, DeviceFault, FaultKind

from .detect import Quad
from .recognise import BACK_INK, Evidence, Reading, Seen, card_scores, pool

Event = CardSeen | DeviceFault
BACK_FAULT = "a card back, or a card of another deck, lay where a face was expected"
EDGES = ("left", "right", "top", "bottom")
EDGE_SLACK = 1.6  # a cut outline's tolerance as the same still card (corners within 6.4% of its height)
CUT_FILL = 0.7  # a partial outline at least this full of its bounding rectangle is card-like (a hand is not)


def cut_fault(edge: int) -> str:
    """The fault's detail for a card lying still partly outside the camera's view."""
    where = f"the {EDGES[edge]} edge" if 0 <= edge < len(EDGES) else "an edge"
    return f"a card lay partly outside the camera's view (cut by {where} of the frame) and was not read"


Judge = Callable[[Evidence, Quad | None], Reading]

# A still, unread object where the reported card lay is that card (dimmed by a glare) when the card scores within
# this much of the best one; a card laid in its place is far further off (another rank), or clearly (a twin).
SAME_CARD_GAP = 0.03


@dataclass(frozen=True, slots=True)
class TrackerSettings:
    stable_frames: int = 3
    gap_frames: int = 2
    unreadable_frames: int = 3  # a card lying still 3 frames always gives an event (#17)
    still: bool = False  # frames are independent photographs: no motion test, one frame is enough

    @classmethod
    def for_stills(cls) -> TrackerSettings:
        return cls(1, 1, 1, True)


def _still(a: Quad, b: Quad, slack: float = 1.0) -> bool:
    """The same outline: centre, size and every corner in place (a card swapped for another in the same spot
    but turned differently is a new object, not the same one lying still). ``slack`` widens the tolerances (an
    outline cut by the frame edge is found on the quarter-size detection image only: a few pixels coarser)."""
    dx, dy = a.center[0] - b.center[0], a.center[1] - b.center[1]
    if (dx * dx + dy * dy) ** 0.5 >= 0.03 * slack * a.height or abs(a.height - b.height) >= 0.04 * slack * a.height:
        return False
    gaps = np.linalg.norm(a.corners[:, None, :] - b.corners[None, :, :], axis=2)  # 4 x 4 corner distances
    return float(gaps.min(axis=1).max()) < 0.04 * slack * a.height


class CardTracker:
    def __init__(self, deal_id: int = 0, settings: TrackerSettings | None = None, judge: Judge | None = None) -> None:
        self.deal_id = deal_id
        self.s = settings or TrackerSettings()
        self.judge = judge
        self._window: list[tuple[float, int, Evidence]] = []  # still frames since the reported card was last read
        self.position = 0
        self._key: int | None = None  # what the current run reads: card index, -1 unreadable
        self._run = 0
        self._run_start: tuple[float, int] = (0.0, 0)
        self._run_conf = 0.0
        self._last_quad: Quad | None = None
        self._still_run = 0  # frames the object in view has lain still, whatever they read
        self._still_start: tuple[float, int, float] = (0.0, 0, 0.0)
        self._absent = 0
        self._emitted: int | None = None  # card reported for what is in view
        self._emitted_quad: Quad | None = None
        self._pending: tuple[float, int, float, Quad] | None = None  # a still object never read
        self._pending_back = False  # ... that is mostly dark print: a back
        self._object: list[Evidence] = []  # every frame's evidence since the object in view lay still
        self._backs = 0  # frames since then that saw a card-shaped object with a back's dark print
        self._dealt: set[int] = set()  # cards reported in this deal
        self._cut_quad: Quad | None = None  # the card-like outline cut by the frame edge in the last frame
        self._cut_run = 0  # frames it has lain still
        self._cut_start: tuple[float, int] = (0.0, 0)
        self._cut_owned = False  # the cut outline is the object in view leaving (it was, or will be, reported)
        self._cut_pending: tuple[float, int, Quad] | None = None  # a cut card that lay still, not yet reported
        self._empty = 0  # consecutive frames showing nothing at all

    def feed(self, reading: Reading, timestamp: float, frame: int) -> list[Event]:
        """Take one frame's reading; return the events it completes (usually none)."""
        out: list[Event] = []
        quad = reading.quad
        cut_before = self._cut_quad if self._last_quad is None else None  # last frame: an outline cut short only
        cut_frames = self._cut_run
        self._see_cut(quad, timestamp, frame, out)
        if quad is not None and quad.partial and self._edge_flicker(quad):
            return out
        if reading.seen is Seen.NOTHING or quad is None or quad.partial:
            self._absent += 1
            self._key, self._run, self._last_quad, self._still_run = None, 0, None, 0
            self._window.clear()
            if self._absent >= self.s.gap_frames:
                self._end_presence(out)
            return out
        self._absent = 0
        key = int(reading.card) if reading.seen is Seen.CARD and reading.card is not None else -1
        steady = self.s.still or (self._last_quad is not None and _still(self._last_quad, quad))
        if steady and not self.s.still:
            self._still_run += 1
        else:
            self._still_run = 1
            self._still_start = (timestamp, frame, reading.confidence)
            if not self.s.still and cut_before is not None and _still(cut_before, quad, EDGE_SLACK):
                # the card came to rest against the edge outlined a pixel short, whole from this frame on: that
                # frame was it lying still too (telling nothing of its face); else a card held three frames, the
                # first cut short, gave no event at all (#31: ♥4 at the left edge)
                self._still_run = 1 + cut_frames
                self._still_start = (self._cut_start[0], self._cut_start[1], reading.confidence)
            self._window.clear()
            self._object.clear()
            self._backs = 0
        if reading.evidence is not None:
            self._object.append(reading.evidence)
        self._backs += reading.seen is Seen.OTHER and reading.ink >= BACK_INK
        if self._pending is not None and _still(self._pending[3], quad):
            self._pending_back = 2 * self._backs > self._still_run
        if key >= 0 and key == self._emitted:
            self._window.clear()  # the reported card, read again: what lies here is still that card
        elif reading.evidence is not None:
            self._window.append((timestamp, frame, reading.evidence))
        if key == self._key and steady:
            self._run += 1
            self._run_conf = min(self._run_conf, reading.confidence)
        else:
            self._key, self._run = key, 1
            self._run_start = (timestamp, frame)
            self._run_conf = reading.confidence
        self._last_quad = quad
        if key >= 0:
            if key == self._emitted:
                self._emitted_quad = quad
            elif self._run >= self.s.stable_frames:
                if self._pending is not None and not self.s.still and _still(self._pending[3], quad):
                    self._pending = None  # the unread object is this card, read at last
                self._flush_pending(out)
                self._settle_cut(quad, out)
                card = self._consistent(Card(key))
                out.append(self._event(card, self._run_start[0], self._run_start[1], self._run_conf))
                self._emitted, self._emitted_quad = key, quad  # as read: the frames to come read it so too
                self._window.clear()
        if self._emitted == key or self._still_run < self.s.unreadable_frames:
            return out
        if self.judge is not None and not self.s.still and len(self._window) >= self.s.unreadable_frames:
            self._judge_window(quad, out)
        elif self._pending is None:
            same_as_read = not self.s.still and self._emitted_quad is not None and _still(self._emitted_quad, quad)
            if not same_as_read:  # not the card already reported, dimmed by a glare
                self._set_pending((self._still_start[0], self._still_start[1], 0.0, quad), out)
        return out

    def _edge_flicker(self, quad: Quad) -> bool:
        """A card lying still against the frame's edge, outlined a pixel short of whole in this frame: the same
        object, lying still on (this frame tells nothing of its face). Without this, a card at the edge whose
        frames alternate whole and cut never had three whole frames in a row: no event at all."""
        if self.s.still or self._last_quad is None or not _still(self._last_quad, quad, EDGE_SLACK):
            return False
        self._absent = 0
        self._still_run += 1
        return True

    def _set_pending(self, pending: tuple[float, int, float, Quad], out: list[Event]) -> None:
        self._settle_cut(pending[3], out)
        self._pending = pending
        self._pending_back = 2 * self._backs > self._still_run

    def _consistent(self, card: Card) -> Card:
        """``card``, or, when it was reported already in this deal, the undealt card the object's frames
        support nearly as well (the deal's own constraint breaks a near tie); else ``card`` again."""
        if int(card) not in self._dealt or self.judge is None or not self._object:
            return card
        evidence = pool(self._object)
        masked = evidence.copy()
        masked[:, sorted(self._dealt)] = -1.0
        verdict = self.judge(masked, None)
        if verdict.seen is Seen.CARD and verdict.card is not None:
            scores = card_scores(evidence)
            if float(scores[int(card)] - scores[int(verdict.card)]) < SAME_CARD_GAP:
                return verdict.card
        return card

    def _undealt(self, evidence: Evidence, quad: Quad) -> Reading | None:
        """An object the still frames leave unsure between cards, some of them dealt already in this deal: the
        undealt card they read with the dealt ones left out, when none of those scores better than it by more
        than ``SAME_CARD_GAP`` (each card occurs once in a deal, #31: ♠7 dealt, an object unsure between ♠7 and
        ♣7 is ♣7). Not where the reported card lies and (nearly) most like it: that is the card dimmed."""
        assert self.judge is not None
        if not self._dealt:
            return None
        scores = card_scores(evidence)
        at_reported = self._emitted is not None and self._emitted_quad is not None and _still(self._emitted_quad, quad)
        if at_reported and float(scores.max() - scores[self._emitted]) < SAME_CARD_GAP:
            return None
        masked = evidence.copy()
        masked[:, sorted(self._dealt)] = -1.0
        verdict = self.judge(masked, quad)
        if verdict.seen is not Seen.CARD or verdict.card is None:
            return None
        return verdict if float(scores.max() - scores[int(verdict.card)]) < SAME_CARD_GAP else None

    def _judge_window(self, quad: Quad, out: list[Event]) -> None:
        """Judge the still frames' mean evidence: a card, the reported card again, or a new unreadable object."""
        assert self.judge is not None
        evidence = pool([e for _, _, e in self._window])
        verdict = self.judge(evidence, quad)
        if verdict.seen is not Seen.CARD:
            verdict = self._undealt(evidence, quad) or verdict
        stamp, frame = self._window[0][0], self._window[0][1]
        if verdict.seen is Seen.CARD and verdict.card is not None:
            if int(verdict.card) == self._emitted:
                return  # the reported card under a glare
            if self._pending is not None and _still(self._pending[3], quad):
                self._pending = None  # the unread object is this card, read at last
            self._flush_pending(out)
            self._settle_cut(quad, out)
            card = self._consistent(verdict.card)
            out.append(self._event(card, stamp, frame, verdict.confidence))
            self._emitted, self._emitted_quad = int(verdict.card), quad  # as read
            self._window.clear()
            return
        if self._pending is not None:
            if _still(self._pending[3], quad):
                return  # already waiting to be reported
            self._flush_pending(out)  # another unread object took its place with no empty frame
        if self._emitted is not None and self._emitted_quad is not None and _still(self._emitted_quad, quad):
            scores = card_scores(evidence)
            if float(scores.max() - scores[self._emitted]) < SAME_CARD_GAP:
                return  # where the reported card lay and (nearly) most like it: that card dimmed, not a new one
        self._set_pending((stamp, frame, 0.0, quad), out)

    def finish(self) -> list[Event]:
        """The stream ended: report a still, unread object in view, if any."""
        out: list[Event] = []
        self._end_presence(out)
        self._flush_cut(out)
        return out

    # -- cards cut by the frame edge ---------------------------------------------------------------------------

    def _see_cut(self, quad: Quad | None, timestamp: float, frame: int, out: list[Event]) -> None:
        """Follow a card-like outline cut by the frame edge; one lying still is remembered to be reported."""
        if quad is None:
            self._empty += 1
            self._cut_quad, self._cut_run, self._cut_owned = None, 0, False
            if self._empty >= self.s.gap_frames:
                self._flush_cut(out)
            return
        self._empty = 0
        if not quad.partial:
            self._cut_quad, self._cut_run = None, 0
            return
        if self._cut_quad is None and self._last_quad is not None:
            # straight after a whole card: that card leaving, if it was (or is to be) reported
            self._cut_owned = self._emitted is not None or self._pending is not None
        if quad.fill < CUT_FILL:
            self._cut_quad, self._cut_run = None, 0
            return
        if self._cut_quad is not None and (self.s.still or _still(self._cut_quad, quad)):
            self._cut_run += 1
        else:
            self._cut_run, self._cut_start = 1, (timestamp, frame)
        self._cut_quad = quad
        if self._cut_run < self.s.unreadable_frames or self._cut_owned:
            return
        if self._cut_pending is None or not _still(self._cut_pending[2], quad):
            self._flush_cut(out)
            self._cut_pending = (self._cut_start[0], self._cut_start[1], quad)
        if self.s.still:
            self._flush_cut(out)  # a photograph: nothing will come of it later

    def _settle_cut(self, whole: Quad, out: list[Event]) -> None:
        """A whole card is reported: if it lies over the cut card waiting to be reported, it is that card pushed
        into view (nothing more to report), else the cut card is reported first."""
        if self._cut_pending is None:
            return
        x, y = self._cut_pending[2].center
        if cv2.pointPolygonTest(whole.corners.reshape(-1, 1, 2), (float(x), float(y)), False) >= 0:
            self._cut_pending = None
        else:
            self._flush_cut(out)

    def _flush_cut(self, out: list[Event]) -> None:
        if self._cut_pending is not None:
            stamp, _, quad = self._cut_pending
            out.append(DeviceFault(FaultKind.UNREADABLE_CARD, cut_fault(quad.edge), stamp, self.deal_id, self.position))
            self._cut_pending = None

    def _end_presence(self, out: list[Event]) -> None:
        self._flush_pending(out)
        self._emitted = None
        self._emitted_quad = None

    def _flush_pending(self, out: list[Event]) -> None:
        if self._pending is not None:
            stamp, frame, conf, _ = self._pending
            if self._pending_back:
                out.append(DeviceFault(FaultKind.OTHER, BACK_FAULT, stamp, self.deal_id, self.position))
            else:
                out.append(self._event(None, stamp, frame, conf))
            self._pending = None

    def _event(self, card: Card | None, stamp: float, frame: int, confidence: float) -> CardSeen:
        event = CardSeen(self.deal_id, self.position, card, None, round(confidence, 4), stamp, frame)
        self.position += 1
        if card is not None:
            self._dealt.add(int(card))
        return event
