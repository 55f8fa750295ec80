"""The interface between the GTP command layer and a Go engine.

:class:`Player` is a structural type (``typing.Protocol``): any object with
these members can be served over GTP by :func:`gtp.commands.standard_registry`.
The GTP package itself never imports an engine.

Conventions:

* colours are ``"b"`` or ``"w"``;
* moves are ``(col, row)`` tuples (see :mod:`gtp.vertex`) or ``None`` for a
  pass;
* a method signals a GTP failure by raising ``ValueError(text)``; the command
  layer answers ``? text``.  Use the canonical texts from
  :mod:`gtp.protocol` where the specification defines one (``illegal move``,
  ``cannot undo``, ...).  Any other exception is reported as
  ``? internal error: ...`` and logged; the server keeps running.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, Protocol, runtime_checkable

from .vertex import Move, Point

__all__ = ["GenMoveResult", "Player"]

GenMoveResult = Point | None | Literal["resign"]
"""What :meth:`Player.genmove` returns: a point, ``None`` (pass) or ``"resign"``."""


@runtime_checkable
class Player(Protocol):
    """What an engine provides to the GTP command layer."""

    @property
    def name(self) -> str:
        """Engine name, answered to ``name``."""
        ...

    @property
    def version(self) -> str:
        """Engine version, answered to ``version``."""
        ...

    def board_size(self) -> int:
        """Current board size (number of lines)."""
        ...

    def set_board_size(self, n: int) -> None:
        """Change the board size and clear the board.

        Raises ``ValueError("unacceptable size")`` if *n* is not supported.
        """
        ...

    def clear(self) -> None:
        """Clear the board, captures and move history."""
        ...

    def set_komi(self, komi: float) -> None:
        """Set the komi."""
        ...

    def play(self, color: str, move: Move) -> None:
        """Play *move* (``None`` = pass) for *color*.

        Raises ``ValueError("illegal move")`` if the move is not legal.
        """
        ...

    def genmove(self, color: str) -> GenMoveResult:
        """Generate, play and return a move for *color*.

        Returns a point, ``None`` for a pass, or ``"resign"``.
        """
        ...

    def undo(self) -> None:
        """Take back the last move; ``ValueError("cannot undo")`` if impossible."""
        ...

    def showboard(self) -> str:
        """A human-readable diagram of the position (may span several lines)."""
        ...

    def final_score(self) -> str:
        """Score as ``B+3.5``, ``W+0.5`` or ``0``; ``ValueError("cannot score")``."""
        ...

    def fixed_handicap(self, n: int) -> list[Point]:
        """Place *n* handicap stones on standard points and return them.

        Raises ``ValueError("invalid number of stones")`` or
        ``ValueError("board not empty")``.
        """
        ...

    def place_free_handicap(self, n: int) -> list[Point]:
        """Choose and place *n* handicap stones and return them.

        Same failures as :meth:`fixed_handicap`.
        """
        ...

    def set_free_handicap(self, vertices: Sequence[Point]) -> None:
        """Place black handicap stones chosen by the opponent.

        Raises ``ValueError("board not empty")`` or
        ``ValueError("bad vertex list")``.
        """
        ...

    def loadsgf(self, path: str, move_number: int | None) -> str:
        """Load the game in *path*, up to before *move_number* if given.

        Returns the colour to move (``"b"``/``"w"``).  Raises ``ValueError``
        with a message for a missing or malformed file.
        """
        ...

    def printsgf(self) -> str:
        """The current game as SGF text."""
        ...

    def time_settings(self, main_time: int, byo_yomi_time: int, byo_yomi_stones: int) -> None:
        """Set Canadian byo-yomi time settings (seconds, seconds, stones)."""
        ...

    def time_left(self, color: str, time: int, stones: int) -> None:
        """Report the time left for *color* (seconds; stones left in the period)."""
        ...
