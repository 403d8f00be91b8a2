"""The station's queue of ledger writes (``dealer.app.ledger_writes.WriteQueue``), pure: no asyncio, no bank, no
sleeps, the runner's clock passed in as numbers. Expected values are written out by hand from the rules the
station follows (docs/service.md, "the bank waiting"): order kept, retry pauses 0.1, 0.25, 0.5, 1, 2 s, a trouble
told once, a refused commit voided, the judge's give-up voiding only the deals not yet banked.
"""

from __future__ import annotations

import pytest

from dealer.app.ledger_writes import LedgerWrite, WriteQueue


def commit(attempt: int, since: float = 1000.0) -> LedgerWrite:
    return LedgerWrite("commit", attempt, since)


def test_a_write_is_attempted_at_once_only_when_none_waits_and_the_order_is_kept() -> None:
    q = WriteQueue()
    assert q.attempt_now() and not q and len(q) == 0
    first, second = commit(1), LedgerWrite("void", 2, 1001.0, reason="fault")
    q.hold(first)
    assert not q.attempt_now()
    q.hold(second)
    assert [w.attempt for w in q] == [1, 2] and q.head() is first
    assert q.done() is first and q.head() is second and len(q) == 1
    assert q.done() is second and q.attempt_now()
    with pytest.raises(IndexError):
        q.head()


def test_a_failed_write_is_retried_after_the_growing_pause_and_told_once_per_new_trouble() -> None:
    q, item = WriteQueue(), commit(1)
    q.hold(item)
    now = 1000.0
    answers = []
    for error in ("database is locked", "database is locked", "database is locked", "disk full", "disk full",
                  "disk full", "disk full"):  # fmt: skip
        answers.append(q.failed(item, error, now))
    assert [tell for tell, _ in answers] == [True, False, False, True, False, False, False]
    assert [round(at - now, 2) for _, at in answers] == [0.1, 0.25, 0.5, 1.0, 2.0, 2.0, 2.0]
    assert (item.tries, item.error) == (7, "disk full")


def test_a_commit_the_bank_refuses_for_good_becomes_its_deal_s_void_tried_afresh() -> None:
    item = LedgerWrite("commit", 4, 1000.0, deal=None, tries=2, error="locked")
    WriteQueue.refused(item, "deal 17 is already in the bank")
    assert (item.kind, item.attempt, item.deal, item.source) == ("void", 4, None, None)
    assert (item.reason, item.detail) == ("bank_refused", {"detail": "deal 17 is already in the bank"})
    assert (item.tries, item.error) == (0, "")


def test_the_judge_gives_up_only_the_deals_the_bank_has_not_taken() -> None:
    q = WriteQueue()
    tried = LedgerWrite("commit", 1, 1000.0, tries=3, error="disk full")
    void = LedgerWrite("void", 2, 1000.5, reason="fault", detail={"detail": "jam"})
    behind = LedgerWrite("commit", 3, 1001.0)  # queued behind, never tried itself
    banked = LedgerWrite("commit", 4, 1002.0, banked=True)  # taken, its news not out yet
    for w in (tried, void, behind, banked):
        q.hold(w)
    assert q.give_up("judge") == 2
    assert (tried.kind, tried.reason, tried.detail) == (
        "void", "bank_unavailable", {"detail": "disk full", "tries": 3, "by": "judge"},
    )  # fmt: skip
    assert (behind.kind, behind.reason, behind.detail) == (
        "void", "bank_unavailable", {"detail": "disk full", "tries": 0, "by": "judge"},  # the queue's trouble
    )  # fmt: skip
    assert (void.reason, void.detail) == ("fault", {"detail": "jam"}) and banked.kind == "commit"
    assert [v["attempt"] for v in q.views()] == [1, 2, 3]  # the banked commit is no longer shown as waiting
    assert q.views()[0] == {"kind": "void", "attempt": 1, "reason": "bank_unavailable", "tries": 3,
                            "error": "disk full", "since": 1000.0}  # fmt: skip
    assert q.give_up("judge") == 0  # nothing left to give up
