"""SGF in and out through sgfmill.

Vertices are (col, row) with row 0 at the bottom, as everywhere in the
engine's Python code; sgfmill's (row, col) also counts rows from the bottom.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass

from sgfmill import sgf

from engine.board import BLACK, WHITE

_COLOR = {"b": BLACK, "w": WHITE}
_LETTER = {BLACK: "b", WHITE: "w"}


@dataclass
class SgfRecord:
    size: int
    komi: float
    setup: list[tuple[int, tuple[int, int]]]            # (colour, (col, row))
    moves: list[tuple[int, tuple[int, int] | None]]     # None is a pass
    to_move: int                                        # after the setup
    handicap: int = 0
    result: str = ""                                    # RE as written ("B+R", "W+2.5")


def parse(data: bytes, name: str = "<sgf>") -> SgfRecord:
    """Parse the main line of an SGF game; ValueError names the file."""
    try:
        game = sgf.Sgf_game.from_bytes(data)
    except ValueError as e:
        raise ValueError(f"cannot read SGF file {name}: {e}") from None
    try:
        root = game.get_root()
        size = game.get_size()
        komi = float(game.get_komi())
        handicap = game.get_handicap() or 0
        result = root.get("RE") if root.has_property("RE") else ""
        black, white, empty = root.get_setup_stones()
        setup = [(BLACK, (c, r)) for r, c in sorted(black)]
        setup += [(WHITE, (c, r)) for r, c in sorted(white)]
        moves = []
        for node in game.get_main_sequence()[1:]:
            colour, move = node.get_move()
            if colour is None:
                continue
            moves.append((_COLOR[colour], None if move is None else (move[1], move[0])))
        if root.has_property("PL"):
            to_move = _COLOR[root.get("PL")]
        elif moves:
            to_move = moves[0][0]
        else:
            to_move = WHITE if black and not white else BLACK
    except (ValueError, KeyError) as e:
        raise ValueError(f"malformed SGF file {name}: {e}") from None
    return SgfRecord(size, komi, setup, moves, to_move, handicap, result.strip())


MAX_SGF_BYTES = 16 << 20
"""Largest SGF file loadsgf reads (a long game record is a few kB)."""


def load(path: str) -> SgfRecord:
    """Read and parse a game record; only a regular file of at most
    MAX_SGF_BYTES, so that a device (/dev/zero, a FIFO) cannot stall the
    engine.  ValueError names the file."""
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer
        with os.fdopen(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as f:
            info = os.fstat(f.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise ValueError(f"cannot read SGF file {path}: not a regular file")
            data = f.read(MAX_SGF_BYTES + 1)
    except OSError as e:
        raise ValueError(f"cannot open SGF file {path}: {e.strerror or e}") from None
    if len(data) > MAX_SGF_BYTES:
        raise ValueError(f"cannot read SGF file {path}: larger than {MAX_SGF_BYTES >> 20} MiB")
    return parse(data, path)


def dumps(size: int, komi: float, setup, moves, handicap: int = 0,
          players: tuple[str, str] | None = None, result: str | None = None,
          to_move: int | None = None) -> str:
    """SGF text of a game: setup stones as AB/AW (with PL, the player to
    move after them, when given), then the moves."""
    game = sgf.Sgf_game(size)
    root = game.get_root()
    root.set("KM", komi)
    root.set("RU", "Chinese")
    root.set("AP", ("delayed-go", "0.1.0"))
    if handicap:
        root.set("HA", handicap)
    black = {(r, c) for colour, (c, r) in setup if colour == BLACK}
    white = {(r, c) for colour, (c, r) in setup if colour == WHITE}
    if black or white:
        root.set_setup_stones(black, white)
        if to_move is not None:
            root.set("PL", _LETTER[to_move])
    if players:
        root.set("PB", players[0])
        root.set("PW", players[1])
    if result:
        root.set("RE", result)
    for colour, v in moves:
        node = game.extend_main_sequence()
        node.set_move(_LETTER[colour], None if v is None else (v[1], v[0]))
    return game.serialise().decode()
