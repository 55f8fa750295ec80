"""The standard GTP v2 commands, bound to a :class:`~gtp.ports.Player`.

:func:`standard_registry` returns a :class:`~gtp.registry.Registry` that an
engine can extend with its own commands before handing it to
:func:`gtp.server.serve`.
"""

from __future__ import annotations

from collections.abc import Sequence

from .ports import Player
from .protocol import BAD_VERTEX_LIST, UNACCEPTABLE_SIZE, GtpError
from .registry import Color, Float, Int, Many, Optional, Registry, Str, Vertex
from .vertex import MAX_BOARD_SIZE, Move, Point, color_name, format_vertex

__all__ = ["PROTOCOL_VERSION", "standard_registry"]

PROTOCOL_VERSION = "2"


def standard_registry(player: Player) -> Registry:
    """Build a registry answering the standard GTP commands for *player*.

    Registered: ``protocol_version``, ``name``, ``version``,
    ``known_command``, ``list_commands``, ``quit``, ``boardsize``,
    ``clear_board``, ``komi``, ``play``, ``genmove``, ``undo``,
    ``showboard``, ``final_score``, ``fixed_handicap``,
    ``place_free_handicap``, ``set_free_handicap``, ``loadsgf``,
    ``printsgf``, ``time_settings`` and ``time_left``.
    """
    reg = Registry(board_size=player.board_size)

    def fmt(move: Move) -> str:
        # A point off the board is an engine bug, not a GTP failure.
        try:
            return format_vertex(move, player.board_size())
        except (ValueError, TypeError) as exc:
            raise RuntimeError(f"engine returned a bad vertex: {exc}") from exc

    def fmt_list(points: Sequence[Point]) -> str:
        return " ".join(fmt(p) for p in points)

    # -- administrative ---------------------------------------------------

    reg.add("protocol_version", lambda: PROTOCOL_VERSION)
    reg.add("name", lambda: player.name)
    reg.add("version", lambda: player.version)
    reg.add("known_command", lambda name: "true" if reg.known(name) else "false", args=(Str,))
    reg.add("list_commands", lambda: "\n".join(reg.names()))
    reg.add("quit", lambda: "", ends_session=True)

    # -- setup --------------------------------------------------------------

    def boardsize(n: int) -> None:
        if not 1 <= n <= MAX_BOARD_SIZE:  # not representable in GTP vertices
            raise GtpError(UNACCEPTABLE_SIZE)
        player.set_board_size(n)

    reg.add("boardsize", boardsize, args=(Int,))
    reg.add("clear_board", lambda: player.clear())
    reg.add("komi", lambda komi: player.set_komi(komi), args=(Float,))

    def fixed_handicap(n: int) -> str:
        return fmt_list(player.fixed_handicap(n))

    def place_free_handicap(n: int) -> str:
        return fmt_list(player.place_free_handicap(n))

    def set_free_handicap(vertices: list[Move]) -> None:
        points = [v for v in vertices if v is not None]
        if len(points) != len(vertices) or len(set(points)) != len(points) or len(points) < 2:
            raise GtpError(BAD_VERTEX_LIST)
        player.set_free_handicap(points)

    reg.add("fixed_handicap", fixed_handicap, args=(Int,))
    reg.add("place_free_handicap", place_free_handicap, args=(Int,))
    reg.add("set_free_handicap", set_free_handicap, args=(Many(Vertex, min_count=1),))

    def loadsgf(path: str, move_number: int | None) -> str:
        return color_name(player.loadsgf(path, move_number))

    def printsgf(path: str | None) -> str:
        sgf = player.printsgf()
        if path is None:
            return sgf
        try:
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(sgf)
        except OSError as exc:
            raise GtpError(f"cannot write file: {exc.strerror or exc}") from None
        return ""

    reg.add("loadsgf", loadsgf, args=(Str, Optional(Int)))
    reg.add("printsgf", printsgf, args=(Optional(Str),))

    # -- play ---------------------------------------------------------------

    reg.add("play", lambda color, move: player.play(color, move), args=(Color, Vertex))

    def genmove(color: str) -> str:
        move = player.genmove(color)
        if isinstance(move, str):
            if move.lower() == "resign":
                return "resign"
            raise RuntimeError(f"engine returned a bad genmove result: {move!r}")
        return fmt(move)

    reg.add("genmove", genmove, args=(Color,))
    reg.add("undo", lambda: player.undo())

    # -- information --------------------------------------------------------

    # The diagram starts on its own line, as GNU Go does: "= \n   A B C ...".
    reg.add("showboard", lambda: "\n" + player.showboard().strip("\n"))
    reg.add("final_score", lambda: player.final_score())

    # -- time control -------------------------------------------------------

    reg.add(
        "time_settings",
        lambda main, byo, stones: player.time_settings(main, byo, stones),
        args=(Int, Int, Int),
    )
    reg.add(
        "time_left",
        lambda color, time, stones: player.time_left(color, time, stones),
        args=(Color, Int, Int),
    )
    return reg
