"""The shipped value head turns the search's choice in a position from a
professional game, where the rollouts would play out a capturing race that
the winner left alone.

test19 (held out from training) game 1624 of the cache that ``python -m
nets.data build data/test19 runs/test19.npz --val-fraction 0`` makes,
move 156, White to move; White won by resignation.  Black has just played
the hane at B15 against White's two stones C16-C15 in the top left, which
now have three liberties.  At the top right White could atari Black's R17-S17
at S16 (two liberties, against five of White's stones above them); the
professional judged that race safe, answered at B16, and won.

With 1,000 rollouts and no network the position is lost for White (0.40);
the value head gives White 0.88.  The search with lambda 0 (rollouts only,
the network's priors kept) spends the most simulations on S16, about twice
as many as on B16; with lambda 0.25, the default, B16 gets two to five times
as many as S16, and S16 a third or less of what it had (12 seeds of 6,000
simulations; S13 sometimes comes close to B16, so the test compares the two
moves).  Found by a scan of test19's resigned games for positions where the
winner is to move, the value head within 0.2 of the result and 1,000
rollouts on the wrong side (docs/value.md).

The search does not wait for values, so how many nodes have one at a given
simulation depends on the network's speed.  The worker is therefore let
catch up after every 1,000 simulations, as a GPU would keep up, so that the
outcome does not hang on this machine's network speed (measured in bf16
and in float32 on an AMD EPYC with AVX-512 BF16, three times each)."""

from __future__ import annotations

import time

import pytest

torch = pytest.importorskip("torch")

from engine.board import WHITE, Board                               # noqa: E402
from engine.config import SearchConfig                              # noqa: E402
from engine.patterns import load_gammas                             # noqa: E402
from engine.search import Search                                    # noqa: E402
from nets.evaluator import DEFAULT_WEIGHTS, PolicyEvaluator         # noqa: E402
from nets.worker import PriorWorker                                 # noqa: E402

RACE_WON = """
. . . . . . . . . . . . . . . . . . .
. . . . . . . O . . . . X . . O O O .
. . . O O O . . . . X . . . X O X X .
. . O . X . . X X X O O . . X X O . .
. X O X . . X . O O . . O . X O O . .
. . X X . . . X O . O O O X . X O . .
. . . . . . . . O O X X X X X X . . .
. . . . . . . . . X O O O X . . X . .
. X O X . . . X . X O . . X . . . . .
. O X X . . . X O X O . . X O . O . .
. O . . . . . X X O O . O O O O X X .
. O X X . . X O O O X . . . X X X O .
. . O X . . . . . O X . X . . X O . O
. . O . . . X . . O O . . . . X O O .
. . . . . X . . O . O O X . . X X O .
. . . O . . X O O O X X . . . X O O .
. . . O . X O O O X X . X . O O X O .
. . O . . X . . . O X . . . X X X . .
. O X . X . . . . . . . . . . . . . .
"""
LAST_MOVES = ("B15", "B1", "E1", "K8", "L8", "P9", "P8", "L6")     # most recent first
SEEDS = range(1, 13)
CHUNKS, CHUNK = 6, 1000


def point(board: Board, name: str) -> int:
    return board.point("ABCDEFGHJKLMNOPQRST".index(name[0]), int(name[1:]) - 1)


def visits(evaluator: PolicyEvaluator, lam: float) -> dict[str, int]:
    """Root visits per move, summed over the seeds."""
    total: dict[str, int] = {}
    for seed in SEEDS:
        board = Board.from_ascii(RACE_WON, WHITE)
        history = tuple(point(board, m) for m in LAST_MOVES)
        search = Search(SearchConfig(value_weight=lam), load_gammas(), 1, seed)
        search.attach_network(evaluator.evaluate, evaluator.supports,
                              value=evaluator.evaluate_value)
        worker = PriorWorker(search.queue, evaluator, 128)
        worker.start()
        try:
            for _ in range(CHUNKS):
                result = search.run(board, 7.5, max_sims=CHUNK, history=history)
                end = time.monotonic() + 60
                while search.queue.depth() and time.monotonic() < end:
                    time.sleep(0.005)
        finally:
            worker.stop()
        for c in result.candidates:
            total[board.name(c.move)] = total.get(board.name(c.move), 0) + c.visits
    return total


def test_the_value_head_sees_the_race_won_and_answers_the_hane() -> None:
    evaluator = PolicyEvaluator(DEFAULT_WEIGHTS, "cpu", 1, "auto")
    assert evaluator.has_value
    rollouts = visits(evaluator, 0.0)
    valued = visits(evaluator, 0.25)
    top = [sorted(v.items(), key=lambda kv: -kv[1])[:3] for v in (rollouts, valued)]
    assert max(rollouts, key=rollouts.get) == "S16", top
    assert valued["B16"] > 1.5 * valued.get("S16", 0), top
    assert valued.get("S16", 0) < rollouts["S16"] / 2, top
