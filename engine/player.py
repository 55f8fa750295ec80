"""The engine as a GTP player: the game, its rules around the board, and
move generation.  Implements gtp.ports.Player structurally (this module does
not import gtp).  Vertices are (col, row) tuples with row 0 at the bottom,
``None`` for a pass; colours are ``"b"``/``"w"``.  Failures are ValueErrors
whose text is the GTP error message.
"""

from __future__ import annotations

import logging
import time

import numpy as np

from engine.board import BLACK, COLOR, MAX_SIZE, PASS, WHITE, IllegalMove
from engine.config import EngineConfig
from engine.flatmc import flat_mc_move
from engine.game import (Game, fixed_handicap_points, format_score,
                         max_fixed_handicap, star_points)
from engine import sgf

log = logging.getLogger("engine")

_COLORS = {"b": BLACK, "w": WHITE}
_LETTERS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"

Vertex = tuple[int, int] | None


class Player:
    name = "delayed-go"
    version = "0.1.0"

    def __init__(self, config: EngineConfig | None = None):
        self.config = config or EngineConfig()
        self.game = Game(size=self.config.board_size, komi=self.config.komi)
        self.rng = np.array([self.config.seed or int(time.time_ns()) | 1], np.uint64)

    # helpers -------------------------------------------------------------
    def _point(self, v: Vertex) -> int:
        return PASS if v is None else self.game.board.point(*v)

    def _vertex(self, p: int) -> Vertex:
        return None if p == PASS else self.game.board.coords(p)

    # board and rules -----------------------------------------------------
    def board_size(self) -> int:
        return self.game.size

    def set_board_size(self, n: int) -> None:
        if not 2 <= n <= MAX_SIZE:
            raise ValueError("unacceptable size")
        self.game.reset(n)

    def clear(self) -> None:
        self.game.reset()

    def set_komi(self, komi: float) -> None:
        self.game.komi = komi

    def play(self, color: str, move: Vertex) -> None:
        try:
            self.game.play(_COLORS[color], self._point(move))
        except IllegalMove:
            raise ValueError("illegal move") from None

    def undo(self) -> None:
        self.game.undo()

    def genmove(self, color: str) -> Vertex | str:
        c = _COLORS[color]
        board = self.game.board
        started = time.perf_counter()
        p = self._choose(c)
        self.game.play(c, p)
        log.info("genmove %s: %s in %.2fs", color, self._format(p), time.perf_counter() - started)
        return self._vertex(p)

    def _choose(self, c: int) -> int:
        """Flat Monte-Carlo choice (a stopgap until the tree search), with
        the usual pass rule: after the opponent's pass, pass if that wins
        on the area count."""
        game = self.game
        if game.moves and game.moves[-1][1] == PASS:
            score = game.score()
            if (score > 0) == (c == BLACK) and score != 0:
                return PASS
        p, winrate = flat_mc_move(game.board, c, game.komi, self.config.rollouts, self.rng)
        log.info("flat MC: %d playouts, best %s winrate %.3f", self.config.rollouts,
                 self._format(p), winrate)
        return p

    def _format(self, p: int) -> str:
        if p == PASS:
            return "pass"
        col, row = self.game.board.coords(p)
        return f"{_LETTERS[col]}{row + 1}"

    # handicap ------------------------------------------------------------
    def _require_empty(self) -> None:
        if not self.game.board.is_empty() or self.game.moves:
            raise ValueError("board not empty")

    def fixed_handicap(self, n: int) -> list[Vertex]:
        self._require_empty()
        if not 2 <= n <= max_fixed_handicap(self.game.size):
            raise ValueError("invalid number of stones")
        pts = fixed_handicap_points(self.game.size, n)
        self._set_handicap(pts)
        return pts

    def place_free_handicap(self, n: int) -> list[Vertex]:
        """The fixed placement where it exists; more stones (or boards
        without one) continue on the star-point lines, spread out."""
        self._require_empty()
        size = self.game.size
        if not 2 <= n < size * size:
            raise ValueError("invalid number of stones")
        if n <= max_fixed_handicap(size):
            pts = fixed_handicap_points(size, n)
        else:
            pts = list(star_points(size))
            rest = sorted(((c, r) for c in range(size) for r in range(size) if (c, r) not in pts),
                          key=lambda v: (min(v[0], v[1], size - 1 - v[0], size - 1 - v[1]) < 2,
                                         (v[0] + v[1]) % 2, v[1], v[0]))
            pts = (pts + rest)[:n]
        self._set_handicap(pts)
        return pts

    def set_free_handicap(self, vertices: list[Vertex]) -> None:
        self._require_empty()
        size = self.game.size
        if not 2 <= len(vertices) < size * size:
            raise ValueError("invalid number of stones")
        if any(v is None for v in vertices) or len(set(vertices)) != len(vertices):
            raise ValueError("bad vertex list")
        self._set_handicap(vertices)

    def _set_handicap(self, vertices: list[Vertex]) -> None:
        self.game.place_setup([(BLACK, self._point(v)) for v in vertices], WHITE)

    # scoring -------------------------------------------------------------
    def final_score(self) -> str:
        return format_score(self.game.score())

    # time ----------------------------------------------------------------
    def time_settings(self, main_time: int, byo_yomi_time: int, byo_yomi_stones: int) -> None:
        for clock in self.game.clocks.values():
            clock.main_time = float(main_time)
            clock.byo_yomi_time = float(byo_yomi_time)
            clock.byo_yomi_stones = byo_yomi_stones
            clock.time_left = None
            clock.stones_left = 0

    def time_left(self, color: str, time_left: int, stones: int) -> None:
        clock = self.game.clocks[_COLORS[color]]
        clock.time_left = float(time_left)
        clock.stones_left = stones

    # SGF -----------------------------------------------------------------
    def loadsgf(self, path: str, move_number: int | None = None) -> str:
        record = sgf.load(path)
        if not 2 <= record.size <= MAX_SIZE:
            raise ValueError(f"cannot load {path}: board size {record.size} not supported")
        if move_number is not None and move_number < 1:
            raise ValueError("move number must be at least 1")
        game = Game(size=record.size, komi=record.komi)
        moves = record.moves if move_number is None else record.moves[:move_number - 1]
        try:
            if record.setup:
                game.place_setup([(c, game.board.point(*v)) for c, v in record.setup],
                                 record.to_move)
            for c, v in moves:
                game.play(c, PASS if v is None else game.board.point(*v))
        except IllegalMove as e:
            raise ValueError(f"cannot load {path}: {e} in the game record") from None
        self.game = game
        return "b" if game.to_move == BLACK else "w"

    def printsgf(self) -> str:
        g = self.game
        setup = [(c, g.board.coords(p)) for c, p in g.setup]
        moves = [(c, self._vertex(p)) for c, p in g.moves]
        handicap = len(setup) if setup and all(c == BLACK for c, _ in setup) else 0
        return sgf.dumps(g.size, g.komi, setup, moves, handicap)

    # display -------------------------------------------------------------
    def showboard(self) -> str:
        """GNU Go's layout: letters above and below, row numbers both sides,
        X black, O white, . empty, + star points."""
        board = self.game.board
        size = board.size
        stars = {board.point(*v) for v in star_points(size)}
        letters = " ".join(_LETTERS[:size])
        lines = ["   " + letters]
        caps_b, caps_w = board.captures
        for r in range(size - 1, -1, -1):
            cells = []
            for col in range(size):
                p = board.point(col, r)
                k = board.b[COLOR, p]
                cells.append("X" if k == BLACK else "O" if k == WHITE else
                             "+" if p in stars else ".")
            line = f"{r + 1:2d} {' '.join(cells)} {r + 1}"
            if r == 1:
                line += f"     WHITE (O) has captured {caps_w} stones"
            elif r == 0:
                line += f"     BLACK (X) has captured {caps_b} stones"
            lines.append(line)
        lines.append("   " + letters)
        return "\n" + "\n".join(lines)
