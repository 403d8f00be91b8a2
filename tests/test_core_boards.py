import pytest

from dealer.core import Board, BoardNumberError, Seat, Vulnerability, board_dealer, board_vulnerability

# Law 2 table for boards 1-16 (DESIGN.md §3)
TABLE = ["None", "NS", "EW", "All", "NS", "EW", "All", "None", "EW", "All", "None", "NS", "All", "None", "NS", "EW"]


@pytest.mark.parametrize("board", range(1, 65))
def test_law_2_boards_1_to_64(board: int) -> None:
    assert board_dealer(board) is Seat("NESW".index("NESW"[(board - 1) % 4]))
    assert board_vulnerability(board).pbn == TABLE[(board - 1) % 16]
    assert Board.numbered(board) == Board(board, board_dealer(board), board_vulnerability(board))


def test_first_boards_explicitly() -> None:
    assert [board_dealer(b).letter for b in range(1, 6)] == list("NESWN")
    assert board_vulnerability(17) is Vulnerability.NONE and board_vulnerability(20) is Vulnerability.ALL


@pytest.mark.parametrize("bad", [0, -1, -16])
def test_board_zero_or_negative_is_an_error(bad: int) -> None:
    with pytest.raises(BoardNumberError, match=f"board number {bad} is out of range"):
        board_dealer(bad)
    with pytest.raises(BoardNumberError):
        board_vulnerability(bad)


def test_vulnerability_aliases_and_seats() -> None:
    assert Vulnerability.parse("Love") is Vulnerability.NONE
    assert Vulnerability.parse("Both") is Vulnerability.ALL
    assert Vulnerability.parse("-") is Vulnerability.NONE
    assert Vulnerability.NS.is_vulnerable(Seat.S) and not Vulnerability.NS.is_vulnerable(Seat.E)
    with pytest.raises(ValueError, match="unknown vulnerability"):
        Vulnerability.parse("NE")
