"""Refusal texts the consoles show, in Russian, written out by hand."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from dealer.cli.hints import COMMAND_HINTS
from dealer.cli.i18n import _CHOSEN, set_language
from dealer.cli.i18n import error as cli_error
from dealer.core.errors import DealerError
from dealer.draw.protocol import DrawError, check_quota
from dealer.i18n import error_catalogue, error_text
from drivers.device import DeviceError
from drivers.transport import PortOpenError, SerialTransport


@pytest.mark.parametrize(
    ("sealed", "limit", "expected"),
    [
        (
            10,
            1,
            "если выбрать ещё 1, всего из банка будет выбрано 2, а запечатано сдач: 10; это 20,00%, больше, чем "
            "разрешает Положение (10%): из этого банка можно выбрать не больше 1, уже выбрано 1 (осталось 0)",
        ),
        (
            20,
            2,
            "если выбрать ещё 1, всего из банка будет выбрано 3, а запечатано сдач: 20; это 15,00%, больше, чем "
            "разрешает Положение (10%): из этого банка можно выбрать не больше 2, уже выбрано 2 (осталось 0)",
        ),
        (
            50,
            5,
            "если выбрать ещё 1, всего из банка будет выбрано 6, а запечатано сдач: 50; это 12,00%, больше, чем "
            "разрешает Положение (10%): из этого банка можно выбрать не больше 5, уже выбрано 5 (осталось 0)",
        ),
        (
            210,
            21,
            "если выбрать ещё 1, всего из банка будет выбрано 22, а запечатано сдач: 210; это 10,48%, больше, чем "
            "разрешает Положение (10%): из этого банка можно выбрать не больше 21, уже выбрано 21 (осталось 0)",
        ),
    ],
)
def test_quota_refusal_reads_right_for_any_limit(sealed: int, limit: int, expected: str) -> None:
    with pytest.raises(Exception) as caught:
        check_quota(sealed, 1000, limit, 1)
    assert error_text(caught.value, "ru") == expected


def test_missing_serial_port_reason_is_said_in_russian(tmp_path: Path) -> None:
    port = str(tmp_path / "ttyUSB9")

    async def open_it() -> PortOpenError:
        with pytest.raises(PortOpenError) as caught:
            await SerialTransport(port).open()
        return caught.value

    closed = asyncio.run(open_it())
    refusal = DeviceError("cannot connect: {exc}", exc=closed)
    assert error_text(refusal, "ru") == f"не удаётся подключиться: {port}: нет такого файла или каталога"
    assert str(refusal).startswith(f"cannot connect: {port}: [Errno 2] No such file or directory")


SCHEDULE_DONE = (
    "the schedule has {sessions} sessions and {done} session draws are made: only a replacement board (one deal) "
    "can be drawn now"
)


def test_command_hints_name_templates_of_the_catalogue() -> None:
    """A hint is keyed by a refusal's template: a reworded refusal must carry its hint along."""
    catalogue = error_catalogue("ru")
    for template in COMMAND_HINTS:
        assert template in catalogue, template
        assert "dealer " not in template and "--" not in template, template
        assert "dealer " not in str(catalogue[template]) and "--" not in str(catalogue[template]), template


def test_refusal_names_the_action_on_every_console_and_the_command_on_the_cli() -> None:
    refusal = DrawError(SCHEDULE_DONE, sessions=2, done=2)
    assert error_text(refusal, "ru") == (
        "в расписании сессий: 2, жеребьёвок сессий проведено: 2; теперь можно выбрать только сдачу для замены (одну)"
    )
    set_language("ru")
    try:
        assert cli_error(refusal) == (
            "в расписании сессий: 2, жеребьёвок сессий проведено: 2; теперь можно выбрать только сдачу для замены "
            "(одну) (в командной строке: dealer draw prepare LABEL --replacement)"
        )
        set_language("en")
        assert cli_error(refusal) == (
            "the schedule has 2 sessions and 2 session draws are made: only a replacement board (one deal) can be "
            "drawn now (on the command line: dealer draw prepare LABEL --replacement)"
        )
        assert cli_error(DrawError("a draw takes at least one deal, not {n}", n=0)) == (
            "a draw takes at least one deal, not 0"
        )
    finally:
        _CHOSEN.clear()


@pytest.mark.parametrize("count", [1, 2, 5, 21])
def test_counts_stand_where_no_noun_agrees_with_them(count: int) -> None:
    passphrase = DealerError(
        "the passphrase has {count} characters: at least {least} are needed", count=count, least=12
    )
    assert error_text(passphrase, "ru") == f"знаков в пароле: {count}, а нужно не меньше 12"
    override = DealerError("commitment.quota.override is {n} characters long, at most {most}", n=count, most=500)
    assert error_text(override, "ru") == f"символов в commitment.quota.override: {count}, допустимо не больше 500"
