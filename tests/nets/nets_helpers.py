"""Synthetic games and SGF directories for the nets tests (no real data
needed)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from engine import sgf
from engine.board import BLACK, PASS, WHITE, Board

DATA = Path(__file__).resolve().parents[2] / "data"


def random_game(seed: int, n_moves: int = 60, size: int = 19, pass_rate: float = 0.02):
    """A random legal game: list of (colour, (col, row) | None), alternating
    colours, black first.  Moves favour the neighbourhood of earlier stones
    so that chains, ataris and captures occur."""
    rng = np.random.default_rng(seed)
    board = Board(size)
    moves = []
    colour = BLACK
    for _ in range(n_moves):
        legal = board.legal_moves(colour)
        if not legal or rng.random() < pass_rate:
            moves.append((colour, None))
            board.play(PASS, colour)
        else:
            near = [p for p in legal if any(board.color(p + d) in (BLACK, WHITE)
                                            for d in (-1, 1, -board.width, board.width))]
            pool = near if near and rng.random() < 0.7 else legal
            p = int(pool[rng.integers(len(pool))])
            board.play(p, colour)
            moves.append((colour, board.coords(p)))
        colour = WHITE if colour == BLACK else BLACK
    return moves


def finished_game(seed: int, n_moves: int, size: int = 9):
    """A random game of n_moves moves without passes, ended by two passes."""
    moves = random_game(seed, n_moves, size=size, pass_rate=0.0)
    last = moves[-1][0]
    return moves + [(WHITE if last == BLACK else BLACK, None), (last, None)]


def write_sgf(path: Path, moves, size: int = 19, komi: float = 7.5, setup=(),
              handicap: int = 0, ranks: tuple[str, str] | None = None) -> Path:
    text = sgf.dumps(size, komi, list(setup), moves, handicap=handicap)
    if ranks is not None:
        text = text.replace("(;", f"(;BR[{ranks[0]}]WR[{ranks[1]}]", 1)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def make_sgf_dir(root: Path, n_good: int = 6, n_moves: int = 50) -> dict:
    """A data directory with n_good usable games under two sources and one
    record of each kind that the cache builder skips."""
    good = []
    for i in range(n_good):
        src = "srcA" if i % 2 == 0 else "srcB"
        ranks = [("7d", "5d"), ("9段", "P7段"), ("", "3k"), ("1p", "2d")][i % 4]
        good.append(write_sgf(root / src / f"g{i}.sgf", random_game(100 + i, n_moves),
                              ranks=ranks))
    bad = root / "bad"
    write_sgf(bad / "small.sgf", random_game(1, 10, size=9), size=9)
    write_sgf(bad / "handicap.sgf", [(WHITE, (3, 3))], handicap=2,
              setup=[(BLACK, (3, 15)), (BLACK, (15, 3))])
    write_sgf(bad / "setup.sgf", [(WHITE, (3, 3))], setup=[(BLACK, (10, 10))])
    write_sgf(bad / "empty.sgf", [])
    write_sgf(bad / "illegal.sgf", [(BLACK, (3, 3)), (WHITE, (3, 3))])
    (bad / "garbage.sgf").write_bytes(b"this is not (an SGF file")
    return {"good": good, "skipped": {"board size 9": 1, "handicap game": 1,
                                      "setup stones": 1, "no moves": 1, "illegal move": 1,
                                      "unparsable SGF": 1}}


def first_real_sgfs(n: int) -> list[Path]:
    """A few real training records when the data are unpacked, else []."""
    base = DATA / "train19"
    if not base.is_dir():
        return []
    import os
    out: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames.sort()
        for f in sorted(filenames):
            if f.endswith(".sgf"):
                out.append(Path(dirpath) / f)
                if len(out) >= n:
                    return out
    return out
