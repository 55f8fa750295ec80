"""GTP vertices and colours.

A point on the board is a ``(col, row)`` tuple of 0-based integers: column 0
is GTP letter ``A`` (the letters skip ``I``) and row 0 is GTP row ``1``, the
bottom row.  A pass is represented by :data:`PASS` (``None``).  Boards of up
to :data:`MAX_BOARD_SIZE` (25) lines can be written in GTP notation.
"""

from __future__ import annotations

import re

from .protocol import SYNTAX_ERROR, GtpError

__all__ = [
    "COLUMN_LETTERS",
    "MAX_BOARD_SIZE",
    "Move",
    "PASS",
    "Point",
    "color_name",
    "format_vertex",
    "parse_color",
    "parse_vertex",
]

Point = tuple[int, int]
"""A board point ``(col, row)``, 0-based, ``(0, 0)`` being ``A1``."""

Move = Point | None
"""A point, or ``None`` for a pass."""

PASS: Move = None

COLUMN_LETTERS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"
"""GTP column letters, in order; ``I`` is not used."""

MAX_BOARD_SIZE = len(COLUMN_LETTERS)

_VERTEX_RE = re.compile(r"([A-HJ-Z])([1-9][0-9]?)")

_COLORS = {"b": "b", "black": "b", "w": "w", "white": "w"}


def parse_vertex(text: str, size: int) -> Move:
    """Parse a GTP vertex such as ``D4`` or ``pass`` (any case).

    Returns ``(col, row)`` or ``None`` for a pass.  Raises
    ``GtpError(SYNTAX_ERROR)`` for anything else: an unknown letter
    (including ``I``), a malformed row, or a point off a board of *size*.
    """
    token = text.strip().upper()
    if token == "PASS":
        return PASS
    match = _VERTEX_RE.fullmatch(token)
    if match is None:
        raise GtpError(SYNTAX_ERROR)
    col = COLUMN_LETTERS.index(match.group(1))
    row = int(match.group(2)) - 1
    if col >= size or row >= size:
        raise GtpError(SYNTAX_ERROR)
    return (col, row)


def format_vertex(vertex: Move, size: int) -> str:
    """Write a point as uppercase GTP text (``D4``), or ``pass`` for ``None``.

    Raises ``ValueError`` if the point is not on a board of *size*.
    """
    if vertex is None:
        return "pass"
    col, row = vertex
    if not (0 <= col < size and 0 <= row < size and size <= MAX_BOARD_SIZE):
        raise ValueError(f"vertex {vertex!r} is not on a {size}x{size} board")
    return f"{COLUMN_LETTERS[col]}{row + 1}"


def parse_color(text: str) -> str:
    """Parse a GTP colour (``b``, ``black``, ``w``, ``white``; any case).

    Returns ``"b"`` or ``"w"``; raises ``GtpError(SYNTAX_ERROR)`` otherwise.
    """
    color = _COLORS.get(text.strip().lower())
    if color is None:
        raise GtpError(SYNTAX_ERROR)
    return color


def color_name(color: str) -> str:
    """Return the long GTP name (``black``/``white``) of colour ``b``/``w``."""
    try:
        return {"b": "black", "w": "white"}[color]
    except KeyError:
        raise ValueError(f"not a colour: {color!r}") from None
