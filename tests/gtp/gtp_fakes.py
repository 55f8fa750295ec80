"""A tiny in-memory Player for testing the GTP layer, and a runnable engine.

Run as a script (``python gtp_fakes.py``) it serves the fake player over
stdin/stdout, which the client tests use as a well-behaved subprocess engine.
The repository root must be on ``PYTHONPATH``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from gtp.protocol import (
    BOARD_NOT_EMPTY,
    CANNOT_UNDO,
    ILLEGAL_MOVE,
    INVALID_NUMBER_OF_STONES,
    UNACCEPTABLE_SIZE,
)
from gtp.vertex import COLUMN_LETTERS, Move, Point


class FakePlayer:
    """A dict-of-stones "engine": no captures, occupied points are illegal."""

    name = "FakePlayer"
    version = "0.1"

    def __init__(self, size: int = 19) -> None:
        self.size = size
        self.komi = 0.0
        self.stones: dict[Point, str] = {}
        self.history: list[tuple[str, Move]] = []
        self.time_control: tuple[int, int, int] | None = None
        self.clock: dict[str, tuple[int, int]] = {}
        self.genmove_result: object = "auto"  # tests may force a result

    def board_size(self) -> int:
        return self.size

    def set_board_size(self, n: int) -> None:
        if not 2 <= n <= 25:
            raise ValueError(UNACCEPTABLE_SIZE)
        self.size = n
        self.clear()

    def clear(self) -> None:
        self.stones = {}
        self.history = []

    def set_komi(self, komi: float) -> None:
        self.komi = komi

    def play(self, color: str, move: Move) -> None:
        if move is not None:
            if move in self.stones:
                raise ValueError(ILLEGAL_MOVE)
            self.stones[move] = color
        self.history.append((color, move))

    def genmove(self, color: str):  # noqa: ANN201 - Point | None | "resign"
        if self.genmove_result != "auto":
            return self.genmove_result
        for row in range(self.size - 1, -1, -1):
            for col in range(self.size):
                if (col, row) not in self.stones:
                    self.play(color, (col, row))
                    return (col, row)
        self.play(color, None)
        return None

    def undo(self) -> None:
        if not self.history:
            raise ValueError(CANNOT_UNDO)
        _, move = self.history.pop()
        if move is not None:
            del self.stones[move]

    def showboard(self) -> str:
        header = "   " + " ".join(COLUMN_LETTERS[: self.size])
        lines = [header]
        for row in range(self.size - 1, -1, -1):
            cells = [{"b": "X", "w": "O"}.get(self.stones.get((c, row), ""), ".") for c in range(self.size)]
            lines.append(f"{row + 1:2d} " + " ".join(cells) + f" {row + 1}")
        lines.append(header)
        return "\n".join(lines)

    def final_score(self) -> str:
        black = sum(1 for c in self.stones.values() if c == "b")
        white = sum(1 for c in self.stones.values() if c == "w")
        diff = black - white - self.komi
        if diff == 0:
            return "0"
        return f"{'B' if diff > 0 else 'W'}+{abs(diff):g}"

    def _handicap_points(self, n: int) -> list[Point]:
        if self.stones:
            raise ValueError(BOARD_NOT_EMPTY)
        if self.size < 7 or not 2 <= n <= 4:
            raise ValueError(INVALID_NUMBER_OF_STONES)
        lo = 2 if self.size < 13 else 3
        hi = self.size - 1 - lo
        return [(hi, hi), (lo, lo), (lo, hi), (hi, lo)][:n]

    def fixed_handicap(self, n: int) -> list[Point]:
        points = self._handicap_points(n)
        for p in points:
            self.stones[p] = "b"
        return points

    def place_free_handicap(self, n: int) -> list[Point]:
        return self.fixed_handicap(n)

    def set_free_handicap(self, vertices: Sequence[Point]) -> None:
        if self.stones:
            raise ValueError(BOARD_NOT_EMPTY)
        for p in vertices:
            self.stones[p] = "b"

    def loadsgf(self, path: str, move_number: int | None) -> str:
        if not os.path.exists(path):
            raise ValueError("cannot load file")
        with open(path, encoding="utf-8") as fh:
            if not fh.read().lstrip().startswith("(;"):
                raise ValueError("cannot load file: malformed SGF")
        return "w" if move_number is not None and move_number % 2 == 0 else "b"

    def printsgf(self) -> str:
        def sgf_point(p: Move) -> str:
            if p is None:
                return ""
            return "abcdefghijklmnopqrstuvwxy"[p[0]] + "abcdefghijklmnopqrstuvwxy"[self.size - 1 - p[1]]

        moves = "".join(f";{c.upper()}[{sgf_point(m)}]" for c, m in self.history)
        return f"(;FF[4]GM[1]SZ[{self.size}]KM[{self.komi:g}]\n{moves})"

    def time_settings(self, main_time: int, byo_yomi_time: int, byo_yomi_stones: int) -> None:
        self.time_control = (main_time, byo_yomi_time, byo_yomi_stones)

    def time_left(self, color: str, time: int, stones: int) -> None:
        self.clock[color] = (time, stones)


def main() -> None:
    from gtp import serve, standard_registry

    serve(standard_registry(FakePlayer()))


if __name__ == "__main__":
    main()
