"""Unit tests for gtp.protocol and gtp.vertex."""

from __future__ import annotations

import pytest

from gtp.protocol import (
    BAD_VERTEX_LIST,
    BOARD_NOT_EMPTY,
    CANNOT_SCORE,
    CANNOT_UNDO,
    ILLEGAL_MOVE,
    INVALID_NUMBER_OF_STONES,
    SYNTAX_ERROR,
    UNACCEPTABLE_SIZE,
    UNKNOWN_COMMAND,
    Command,
    GtpError,
    format_response,
    parse,
    preprocess,
)
from gtp.vertex import (
    COLUMN_LETTERS,
    MAX_BOARD_SIZE,
    PASS,
    color_name,
    format_vertex,
    parse_color,
    parse_vertex,
)

# -- preprocess ----------------------------------------------------------------


@pytest.mark.parametrize(
    "line, expected",
    [
        ("name\n", "name"),
        ("  name  \n", "name"),
        ("1 play b D4\r\n", "1 play b D4"),
        ("play\tb\tD4", "play b D4"),
        ("bo\x01ard\x7fsize 9", "boardsize 9"),
        ("\x00\x1bname\x1f", "name"),
        ("name # a comment", "name"),
        ("komi 6.5#comment", "komi 6.5"),
        ("genmove b\x0b", "genmove b"),
        ("échec", "échec"),  # non-ASCII is not a control character
    ],
)
def test_preprocess_cleans_line(line: str, expected: str) -> None:
    assert preprocess(line) == expected


@pytest.mark.parametrize("line", ["", "\n", "   \n", "\t\t", "# comment", "   # x", "\x01\x02\n", "#"])
def test_preprocess_ignores_blank_and_comment_lines(line: str) -> None:
    assert preprocess(line) is None


# -- parse ---------------------------------------------------------------------


def test_parse_without_id() -> None:
    assert parse("play b D4") == Command(None, "play", ["b", "D4"])


def test_parse_with_id() -> None:
    assert parse("12 genmove w") == Command(12, "genmove", ["w"])
    assert parse("0 name") == Command(0, "name", [])


def test_parse_collapses_whitespace() -> None:
    assert parse("  3   play   w   pass ") == Command(3, "play", ["w", "pass"])


def test_parse_non_numeric_first_token_is_the_name() -> None:
    assert parse("-1 name") == Command(None, "-1", ["name"])
    assert parse("1a name") == Command(None, "1a", ["name"])


def test_parse_id_only_gives_empty_name() -> None:
    assert parse("42") == Command(42, "", [])


# -- format_response -------------------------------------------------------------


def test_format_success_and_failure() -> None:
    assert format_response(None, True, "D4") == "= D4\n\n"
    assert format_response(5, True, "D4") == "=5 D4\n\n"
    assert format_response(None, False, "illegal move") == "? illegal move\n\n"
    assert format_response(7, False, "illegal move") == "?7 illegal move\n\n"


def test_format_empty_answer_has_no_trailing_space() -> None:
    assert format_response(None, True, "") == "=\n\n"
    assert format_response(3, True, "") == "=3\n\n"
    assert format_response(None, False, "") == "?\n\n"
    assert format_response(None, True, "\n\n") == "=\n\n"


def test_format_multiline_answer() -> None:
    assert format_response(1, True, "a\nb\nc") == "=1 a\nb\nc\n\n"


def test_format_collapses_blank_lines_inside_answer() -> None:
    assert format_response(None, True, "a\n\nb\n   \nc\n\n") == "= a\nb\nc\n\n"
    assert format_response(None, True, "a\r\n\r\nb") == "= a\nb\n\n"


def test_format_answer_may_start_on_its_own_line() -> None:
    assert format_response(None, True, "\n  A B\n1 . .") == "= \n  A B\n1 . .\n\n"


def test_format_response_never_contains_an_inner_empty_line() -> None:
    text = format_response(9, True, "\n\nx\n\n\ny\n \t\nz\n")
    assert text.endswith("\n\n")
    assert "\n\n" not in text[:-2]


# -- errors ----------------------------------------------------------------------


def test_gtp_error_carries_text() -> None:
    err = GtpError(ILLEGAL_MOVE)
    assert err.text == "illegal move"
    assert str(err) == "illegal move"


def test_canonical_error_strings() -> None:
    assert [
        UNKNOWN_COMMAND,
        SYNTAX_ERROR,
        ILLEGAL_MOVE,
        UNACCEPTABLE_SIZE,
        CANNOT_UNDO,
        BOARD_NOT_EMPTY,
        INVALID_NUMBER_OF_STONES,
        CANNOT_SCORE,
        BAD_VERTEX_LIST,
    ] == [
        "unknown command",
        "syntax error",
        "illegal move",
        "unacceptable size",
        "cannot undo",
        "board not empty",
        "invalid number of stones",
        "cannot score",
        "bad vertex list",
    ]


# -- vertices ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, size, expected",
    [
        ("A1", 19, (0, 0)),
        ("a1", 19, (0, 0)),
        ("D4", 19, (3, 3)),
        ("d4", 9, (3, 3)),
        ("H8", 19, (7, 7)),
        ("J8", 19, (8, 7)),  # I is skipped: J is column 8
        ("j1", 9, (8, 0)),
        ("T19", 19, (18, 18)),
        ("t19", 19, (18, 18)),
        ("Z25", 25, (24, 24)),
        ("B2", 2, (1, 1)),
    ],
)
def test_parse_vertex_valid(text: str, size: int, expected: tuple[int, int]) -> None:
    assert parse_vertex(text, size) == expected


@pytest.mark.parametrize("text", ["pass", "PASS", "Pass", "pAsS"])
def test_parse_vertex_pass_any_case(text: str) -> None:
    assert parse_vertex(text, 19) is PASS is None


@pytest.mark.parametrize(
    "text, size",
    [
        ("I5", 19),  # no column I
        ("i5", 19),
        ("Z19", 19),  # column off the board
        ("A20", 19),  # row off the board
        ("K10", 9),
        ("A0", 19),
        ("A01", 19),
        ("A", 19),
        ("4D", 19),
        ("", 19),
        ("D-4", 19),
        ("AA1", 25),
        ("D4x", 19),
        ("passs", 19),
        ("resign", 19),
        ("A100", 25),
    ],
)
def test_parse_vertex_invalid_is_syntax_error(text: str, size: int) -> None:
    with pytest.raises(GtpError) as info:
        parse_vertex(text, size)
    assert info.value.text == SYNTAX_ERROR


def test_column_letters_skip_i() -> None:
    assert "I" not in COLUMN_LETTERS
    assert MAX_BOARD_SIZE == 25
    assert COLUMN_LETTERS.index("J") == 8


@pytest.mark.parametrize("size", [2, 5, 9, 13, 19, 25])
def test_vertex_round_trip(size: int) -> None:
    for col in range(size):
        for row in range(size):
            text = format_vertex((col, row), size)
            assert text == text.upper()
            assert parse_vertex(text, size) == (col, row)
            assert parse_vertex(text.lower(), size) == (col, row)


def test_format_vertex() -> None:
    assert format_vertex(None, 19) == "pass"
    assert format_vertex((3, 3), 19) == "D4"
    assert format_vertex((8, 0), 19) == "J1"
    assert format_vertex((18, 18), 19) == "T19"


@pytest.mark.parametrize("vertex, size", [((19, 0), 19), ((0, 19), 19), ((-1, 0), 19), ((0, 0), 26)])
def test_format_vertex_off_board(vertex: tuple[int, int], size: int) -> None:
    with pytest.raises(ValueError):
        format_vertex(vertex, size)


# -- colours ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [("b", "b"), ("B", "b"), ("black", "b"), ("BLACK", "b"), ("Black", "b"),
     ("w", "w"), ("W", "w"), ("white", "w"), ("WHITE", "w"), ("wHiTe", "w")],
)
def test_parse_color(text: str, expected: str) -> None:
    assert parse_color(text) == expected


@pytest.mark.parametrize("text", ["", "x", "red", "bl", "blacks", "empty", "0"])
def test_parse_color_invalid(text: str) -> None:
    with pytest.raises(GtpError) as info:
        parse_color(text)
    assert info.value.text == SYNTAX_ERROR


def test_color_name() -> None:
    assert color_name("b") == "black"
    assert color_name("w") == "white"
    with pytest.raises(ValueError):
        color_name("x")
