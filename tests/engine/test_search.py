"""Tests for the UCT+RAVE tree search (engine/search.py), null setup (no
network: heuristic priors and the 3x3-pattern playouts only).

The tactical tests run the search from a fixed position over 20 seeds,
``Search(SearchConfig(), gammas, threads=1, seed=k)`` for k = 1..20, with a
stated simulation budget, and require the right move in at least 19 of the 20
runs (95 %).  Every position is small and *settled*: each group is either
clearly alive with its territory walled off, or it lives or dies by the one
fight the test is about, so that the area count (Tromp-Taylor, the komi
given) of both outcomes can be done by hand in the docstring.  The komi is
chosen so that the right move wins and every other move loses.

Diagrams are top row first; vertices are GTP's (column letters without I,
row 1 at the bottom).
"""

from __future__ import annotations

import threading
import time
from collections import Counter

import numpy as np
import pytest

from engine.board import BLACK, EMPTY, PASS, WHITE, Board
from engine.config import MIN_MEMORY, SearchConfig
from engine.patterns import load_gammas
from engine.search import (P_RAVE_EQUIV, P_RAVE_ROOT, Search, params_vector, position_key,
                           select_child)
from engine.tree import (EF_AMAF_N, EF_AMAF_W, EI_MOVE, EI_NODE, EXPANDED, F_VISITS, F_WINS,
                         NO_NODE, ROOT, T_FIRST, T_MOVE, T_NCHILD, T_PARENT, T_STATE, Tree,
                         init_edge, init_node)
from tree_checks import structure_problems

SEEDS = range(1, 21)
REQUIRED = 19          # of 20 seeds: 95 %


@pytest.fixture(scope="module")
def gammas():
    return load_gammas()


vertex = Board.at


name = Board.name


def choices(gammas, diagram: str, to_move: int, komi: float, sims: int) -> Counter:
    """The move the search picks from ``diagram`` for each of the 20 seeds."""
    picked = Counter()
    for k in SEEDS:
        board = Board.from_ascii(diagram, to_move)
        result = Search(SearchConfig(), gammas, threads=1, seed=k).run(board, komi, max_sims=sims)
        picked[name(board, result.move)] += 1
    return picked


def assert_mostly(picked: Counter, move: str) -> None:
    assert picked[move] >= REQUIRED, f"wanted {move} in {REQUIRED}/20 seeds, got {dict(picked)}"


# --------------------------------------------------------------------------
# tactics


CAPTURE_9x9 = """
    . . . X O . . . .
    . . . X O . . . .
    . . . X O . . . .
    X . . X O . . . .
    O X . X O . . . .
    . . . X O . . . .
    . . . X . O O O O
    . . . X O X X X O
    . . . X O X . . O
"""


def test_capture_of_the_cutting_stones_decides_the_game(gammas):
    """9x9, black to play, komi 0.5, 3,000 simulations, >= 19/20 seeds: E3.

    The white cutters E1-E2 are in atari (their only liberty is E3).  Black's
    four stones F1 F2 G2 H2 have only the two-point eye G1-H1, so they live
    only by capturing the cutters.  Columns A-D are black's, the white wall
    E4-E9 / F3-J3 with everything to its right white's.

    * Black E3 captures two: black owns A-D (36) + E1-E3 (3) + F1 F2 G1 G2 H1
      H2 (6) = 45, white the other 36: B+8.5.
    * Anything else (the decoy A4, which captures the lone white A5 stone
      inside black's area, included): white E3 connects out, black's four
      stones die and white owns E1-J9 = 45 against black's 36: W+9.5.
    """
    assert_mostly(choices(gammas, CAPTURE_9x9, BLACK, 0.5, 3000), "E3")


CONNECT_7x7 = """
    . . X O . . .
    . . X O . . .
    . . X O . . .
    . . X O . . .
    . . X O O O O
    . . X . X X O
    . . X O . X O
"""


def test_chain_escapes_to_the_side_of_its_friends(gammas):
    """7x7, black to play, komi 0.5, 2,000 simulations, >= 19/20 seeds: D2.

    Black's chain E2 F2 F1 has two liberties, D2 and E1, inside white's
    corner.  D2 connects it to black's wall on column C (and leaves the white
    D1 stone with the single liberty E1, dead); E1 runs the wrong way: the
    chain is then in atari at D2 and white captures four stones there.

    * Black D2: black owns A-C (21) + D1 D2 E1 E2 F1 F2 = 27, white 22: B+4.5.
    * Black E1 or any other move: white D2 captures (or ataris with no
      escape: black E1 would be suicide), white owns D1-G7 = 28 against
      black's 21: W+7.5.
    """
    assert_mostly(choices(gammas, CONNECT_7x7, BLACK, 0.5, 2000), "D2")


ATARI_7x7 = """
    . . X O . . .
    . . X O . . .
    . . X O . . .
    . . X O . . .
    . . X X O O O
    . . X O X X O
    . . X . . X O
"""


def test_chain_in_atari_gets_out_by_capturing_not_by_extending(gammas):
    """7x7, black to play, komi 0.5, 2,000 simulations, >= 19/20 seeds: D1.

    Black's chain E2 F2 F1 is in atari (liberty E1).  Extending at E1 runs
    into the corner and leaves the chain in atari at D1, where white
    captures four stones.  The way out is on the other side: D1 captures
    the white D2 stone (also in atari) and the chain has the two eyes D2
    and E1 shared with black's wall, which white can fill neither of.

    * Black D1: black owns A-C (21) + D1 D2 D3 E1 E2 F1 F2 = 28, white 21:
      B+6.5.
    * Black E1: white D1 takes four, black 22 - white 27: W+5.5.
    * Anything else: white E1 takes three, black D1 then takes D2; white
      keeps E1 E2 F1 F2: black 24 - white 25: W+1.5.
    """
    assert_mostly(choices(gammas, ATARI_7x7, BLACK, 0.5, 2000), "D1")


KILL_7x7 = """
    . . . X O . .
    . . . X O . .
    . . . X O . .
    . . . X O O .
    X X X X X O .
    O O O O X O .
    . . . O X O .
"""


def test_vital_point_kills_the_straight_three_in_the_corner(gammas):
    """7x7, black to play, komi 5.5, 2,000 simulations, >= 19/20 seeds: B1.

    White's corner group A2 B2 C2 D2 D1 has the straight three A1 B1 C1 as
    its only eye space (its only liberties).  Black B1, the vital point,
    leaves one eye at most: white A1 or C1 is answered by capturing.  Any
    other black move lets white play B1 with two eyes.  Black's group (the
    wall and A4-C7) and white's right side (E4-G7 and F1-G3) are alive.

    * Black B1: black owns A1-C7 + D1-D7 + E1-E3 = 31, white 18: B+7.5.
    * Anything else: white keeps its 8 corner points: black 23, white 26:
      W+8.5.
    """
    assert_mostly(choices(gammas, KILL_7x7, BLACK, 5.5, 2000), "B1")


def test_tactical_positions_are_decisive_for_either_side(gammas):
    """With white to play the same fights decide the game, and white plays
    the key point (in ATARI_7x7 white's key move is the capture E1): a
    consistency check of the diagrams, 2,000 simulations, seed 1."""
    for diagram, komi, key in ((CAPTURE_9x9, 0.5, "E3"), (CONNECT_7x7, 0.5, "D2"),
                               (ATARI_7x7, 0.5, "E1"), (KILL_7x7, 5.5, "B1")):
        board = Board.from_ascii(diagram, WHITE)
        result = Search(SearchConfig(), gammas, threads=1, seed=1).run(board, komi, max_sims=2000)
        assert name(board, result.move) == key
        assert result.winrate > 0.5


# --------------------------------------------------------------------------
# the result


def _positions():
    yield Board(9)
    yield Board.from_ascii(CAPTURE_9x9, BLACK)
    yield Board.from_ascii(KILL_7x7, WHITE)
    board = Board(7)
    for v in ("D4", "C3", "E3", "D3", "C4", "E4", "pass", "B3"):
        board.play(vertex(board, v))
    yield board                       # white to move after a black pass


def test_candidates_are_distinct_legal_moves(gammas):
    """Every candidate is a legal move (or pass) for the player to move,
    none twice; the chosen move is the most visited candidate."""
    for board in _positions():
        result = Search(SearchConfig(), gammas, threads=2, seed=3).run(board, 7.5, max_sims=1500)
        moves = [c.move for c in result.candidates]
        assert moves, "no candidates"
        assert len(set(moves)) == len(moves)
        for m in moves:
            assert board.is_legal(m, board.to_move), name(board, m)
            if m != PASS:
                assert board.color(m) == EMPTY
        assert result.move == result.candidates[0].move
        assert result.candidates[0].visits == max(c.visits for c in result.candidates)
        assert 0.0 <= result.winrate <= 1.0
        # each candidate's principal variation starts with its own move
        assert all(c.pv[0] == c.move for c in result.candidates)


SEND_TWO_7x7 = """
    . . . O O O .
    . . . O . O X
    . . . O O X .
    O O O O X X X
    X X X X X . .
    . . . . X . .
    . . . . X . .
"""


def _send_two_return_one() -> Board:
    """Send two, return one.  From the diagram (black to play) black G7 puts
    G6-G7 in atari (sends two), white G5 takes them; now the white G5 stone
    is in atari and black's natural recapture G6 (returning one) would
    recreate the diagram's position exactly: forbidden by positional superko,
    not by the simple ko rule (G6 would have two liberties).  Black to play."""
    board = Board.from_ascii(SEND_TWO_7x7, BLACK)
    board.play(vertex(board, "G7"), BLACK)
    assert board.play(vertex(board, "G5"), WHITE) == 2
    return board


def test_superko_recapture_is_never_chosen(gammas):
    """Send-two-return-one, komi 1.5, 2,000 simulations, 20 seeds.

    The recapture at G6 is the only move that wins: it restores the
    diagram, where black keeps at least G5 and G6 (white G7 is answered by
    G5: black 27, white 22); without it white connects at G6 and owns G5-G7,
    winning by half a point (black 25, white 24).  With the game's history it is a
    superko violation: it must never be a root candidate nor the move.
    The same position without the history (where G6 is legal) shows that it
    is the search's choice, i.e. that the exclusion is what keeps it out."""
    board = _send_two_return_one()
    g6 = vertex(board, "G6")
    assert board.legality(g6, BLACK) == "superko"
    assert board.ko == PASS           # not a simple ko
    for k in SEEDS:
        result = Search(SearchConfig(), gammas, threads=1, seed=k).run(board.copy(), 1.5,
                                                                      max_sims=2000)
        assert result.move != g6
        assert g6 not in [c.move for c in result.candidates]
    fresh = board.copy()
    fresh.history = [fresh.hash]
    picked = Counter()
    for k in SEEDS:
        result = Search(SearchConfig(), gammas, threads=1, seed=k).run(fresh, 1.5, max_sims=2000)
        picked[name(fresh, result.move)] += 1
    assert_mostly(picked, "G6")


def test_superko_move_kept_from_a_reused_tree_is_pruned(gammas):
    """The tree searched with white to move (before G5) has black's G6 as a
    legal reply below white's G5.  After ``advance(G5)`` that subtree is kept
    and its root has a G6 child; the next run must not offer it."""
    board = Board.from_ascii(SEND_TWO_7x7, BLACK)
    board.play(vertex(board, "G7"), BLACK)
    search = Search(SearchConfig(), gammas, threads=1, seed=5)
    first = search.run(board, 1.5, max_sims=3000)
    g5 = vertex(board, "G5")
    assert first.move == g5
    board.play(g5, WHITE)
    search.advance(g5, board)
    g6 = vertex(board, "G6")
    assert search.tree.child_with_move(ROOT, g6) != NO_NODE, "the kept root should know G6"
    result = search.run(board, 1.5, max_sims=1000)
    assert result.move != g6
    assert g6 not in [c.move for c in result.candidates]


# --------------------------------------------------------------------------
# stopping


@pytest.mark.parametrize("threads", [1, 2])
def test_max_sims_stops_near_the_count(gammas, threads):
    """max_sims=3000 on the empty 9x9 board: never more than the count plus
    what the threads have in flight (a batch each, plus a poll interval);
    fewer only when the early stop is justified, i.e. the most visited move
    leads the second by more than the simulations left."""
    cfg = SearchConfig()
    for seed in (1, 2, 3):
        search = Search(cfg, gammas, threads=threads, seed=seed)
        result = search.run(Board(9), 7.5, max_sims=3000)
        assert result.sims <= 3000 + threads * cfg.batch + 100
        if threads == 1:   # the last batch is cut to the budget
            assert result.sims <= 3000
        if result.sims < 3000:
            visits = sorted((c.visits for c in result.candidates), reverse=True)
            assert visits[0] - visits[1] > 3000 - result.sims
        if threads == 1:   # with more, racing updates of the root's count are tolerated
            assert result.sims == int(search.tree.tf[F_VISITS, ROOT])


@pytest.mark.parametrize("threads", [1, 2])
def test_seconds_stops_near_the_time(gammas, threads):
    """seconds=0.8, no simulation limit, on the empty 9x9 board: the run
    ends within 0.25 s after the deadline (wall clock measured here too) and
    does not end much before it unless the result was decided."""
    search = Search(SearchConfig(), gammas, threads=threads, seed=11)
    started = time.perf_counter()
    result = search.run(Board(9), 7.5, seconds=0.8)
    wall = time.perf_counter() - started
    assert result.seconds <= 0.8 + 0.25
    assert wall <= 0.8 + 0.35
    assert result.sims > 100
    if result.seconds < 0.6:
        visits = sorted((c.visits for c in result.candidates), reverse=True)
        rate = result.sims / result.seconds
        assert visits[0] - visits[1] > rate * (0.8 - result.seconds) * 0.5


@pytest.mark.parametrize("threads", [1, 2])
def test_reports_taken_as_the_search_starts_keep_ownership_in_range(gammas, threads):
    """kata-analyze reports a snapshot every interval, the first as the
    search starts.  On 5x5 a playout takes tens of microseconds, so dozens
    finish while a snapshot gathers the candidates; the ownership it reports
    must still be a share of the playouts, +1 black .. -1 white (before
    2026-11-28 a snapshot could divide 23 playouts' areas by one)."""
    board = Board.from_ascii("""
        . . X O .
        . . X O .
        . . X O .
        . . X O .
        . . X O .
    """, WHITE)
    for seed in range(1, 11):
        search = Search(SearchConfig(), gammas, threads=threads, seed=seed)
        runner = threading.Thread(target=search.run, args=(board.copy(), 0.0),
                                  kwargs={"max_sims": 1000})
        runner.start()
        worst = 0.0
        while runner.is_alive():
            worst = max(worst, float(np.abs(search.snapshot(board).ownership).max()))
        runner.join()
        assert worst <= 1.0, (seed, worst)


def test_decided_position_may_stop_early_but_never_overshoots(gammas):
    """In the 9x9 capture position E3 takes almost every simulation, so the
    early stop may end a 20,000-simulation run well before the count."""
    search = Search(SearchConfig(), gammas, threads=1, seed=1)
    board = Board.from_ascii(CAPTURE_9x9, BLACK)
    result = search.run(board, 0.5, max_sims=20_000)
    assert name(board, result.move) == "E3"
    assert result.sims <= 20_000 + 100


# --------------------------------------------------------------------------
# tree reuse


def _play_on(search: Search, board: Board, move: int) -> None:
    board.play(move)
    search.advance(move, board)


def test_tree_is_kept_after_our_move_and_the_reply(gammas):
    """Search, play the chosen move, then the opponent's most expected reply
    (the principal variation's second move): the tree comes into the next
    run non-empty, rooted at the new position, and the run adds to it."""
    board = Board(9)
    for v in ("E5", "C4", "G4"):
        board.play(vertex(board, v))
    search = Search(SearchConfig(), gammas, threads=1, seed=2)
    result = search.run(board, 7.5, max_sims=4000)
    best = result.candidates[0]
    assert len(best.pv) >= 2
    ours, reply = best.pv[0], best.pv[1]
    _play_on(search, board, ours)
    assert search.tree.used > 1
    _play_on(search, board, reply)
    tree = search.tree
    kept_visits = float(tree.tf[F_VISITS, ROOT])
    assert tree.used > 1
    assert kept_visits > 0
    assert search.root_key == position_key(board)
    kids = tree.children(ROOT)
    assert len(kids) > 0
    for i in kids:
        m = int(tree.ti[T_MOVE, i])
        assert board.is_legal(m, board.to_move)
        assert tree.ti[T_PARENT, i] == ROOT
    nxt = search.run(board, 7.5, max_sims=1000)
    assert nxt.sims > 0
    assert float(search.tree.tf[F_VISITS, ROOT]) >= kept_visits + nxt.sims - 1
    assert board.is_legal(nxt.move, board.to_move)


def test_clear_and_other_positions_reset_the_tree(gammas):
    """clear() leaves a bare root and forgets the position; a run on a
    position other than the kept root starts from a fresh tree."""
    board = Board(9)
    search = Search(SearchConfig(), gammas, threads=1, seed=4)
    search.run(board, 7.5, max_sims=2000)
    assert search.tree.used > 1
    search.clear()
    assert search.tree.used == 1
    assert search.tree.tf[F_VISITS, ROOT] == 0
    assert search.tree.ti[T_NCHILD, ROOT] == 0
    assert search.root_key is None
    # advance after clear() has nothing to keep
    board.play(vertex(board, "E5"))
    search.advance(vertex(board, "E5"), board)
    assert search.tree.used == 1 and search.root_key is None
    # a run on a position other than the kept root drops the tree
    search.run(board, 7.5, max_sims=500)
    other = Board(9)
    other.play(vertex(other, "C3"))
    r = search.run(other, 7.5, max_sims=300)
    assert float(search.tree.tf[F_VISITS, ROOT]) == r.sims


def test_reused_tree_stays_consistent_over_a_short_game(gammas):
    """Regression for the per-thread allocation arenas after tree reuse.

    One thread, 9x9: search 3,000 simulations, play the move and advance,
    ten times.  After every run the reachable tree must be sound
    (tests/engine/tree_checks.py) and the root's moves legal."""
    board = Board(9)
    search = Search(SearchConfig(), gammas, threads=1, seed=1)
    for _ in range(10):
        result = search.run(board, 7.5, max_sims=3000)
        assert structure_problems(search.tree, board) == []
        _play_on(search, board, result.move)


# Two black stones D4-D3 in atari, white to move: white's D2 takes them.
CAPTURE_AT_D2_7x7 = """
    . . . . . . X
    . . . . . . X
    . . . O . . .
    . . O X O . .
    . . O X O . .
    X . . . . . .
    X . . . . . .
"""


def _unfit_moves(search: Search, board: Board, depth: int = 4) -> list[str]:
    """Tree moves, down to ``depth``, that the position they would be played
    on does not allow."""
    tree = search.tree
    bad = []
    stack = [(ROOT, board.copy(), 0)]
    while stack:
        node, b, d = stack.pop()
        if d == depth:
            continue
        for k in tree.edges(node):
            m = int(tree.ei[EI_MOVE, k])
            if not b.is_legal(m, b.to_move):
                bad.append(f"{name(b, m)} at depth {d}")
                continue
            if tree.child(k) != NO_NODE:
                after = b.copy()
                after.play(m)
                stack.append((tree.child(k), after, d + 1))
    return bad


def test_a_move_by_the_colour_not_to_move_drops_the_tree(gammas):
    """The engine hang of issue 15.  The tree of a white-to-move search has
    white's D2 capturing D4-D3, and below it black moves at D4 and D3.
    GTP lets the controller play black's D2 instead: keeping the D2 subtree
    would put a black stone where the tree has a white one, its lines would
    play on the occupied D4 and D3, and the corrupted chain lists made the
    next search spin for ever (tests/engine/test_robustness.py replays it
    over GTP).  The tree must be dropped, and the next search must find a
    tree that fits the board."""
    board = Board.from_ascii(CAPTURE_AT_D2_7x7, WHITE)
    search = Search(SearchConfig(), gammas, threads=1, seed=1)
    search.run(board, 0.5, max_sims=3000)
    d2 = vertex(board, "D2")
    below = search.tree.child_with_move(ROOT, d2)
    assert below != NO_NODE and len(search.tree.children(below)) > 0
    board.play(d2, BLACK)
    search.advance(d2, board)
    assert search.root_key is None and search.tree.used == 1
    search.run(board, 0.5, max_sims=1000)
    assert _unfit_moves(search, board) == []


def test_a_tree_that_does_not_fit_the_board_costs_simulations_not_the_engine(gammas):
    """Defence in depth: should a tree ever hold a move its position does
    not allow (here written into it by hand, deep and at the root), the
    descent stops there instead of corrupting the playing board, the search
    ends as asked, and the tree is dropped afterwards."""
    board = Board(9)
    for v in ("E5", "C4", "G4"):
        board.play(vertex(board, v))
    search = Search(SearchConfig(), gammas, threads=1, seed=3)
    first = search.run(board, 7.5, max_sims=3000)
    child = search.tree.child_with_move(ROOT, first.move)
    replies = search.tree.edges(child)
    assert len(replies) > 0
    for k in replies:                            # every reply onto the stone just played
        search.tree.ei[EI_MOVE, k] = first.move
    again = search.run(board, 7.5, max_sims=2000)
    assert again.sims > 100 and board.is_legal(again.move, board.to_move)
    assert search.root_key is None               # dropped after the search
    search.run(board, 7.5, max_sims=500)
    for k in search.tree.edges(ROOT):            # now at the root: an occupied point
        search.tree.ei[EI_MOVE, k] = vertex(board, "E5")
        break
    third = search.run(board, 7.5, max_sims=500)
    assert third.sims > 100 and board.is_legal(third.move, board.to_move)
    assert _unfit_moves(search, board) == []


# --------------------------------------------------------------------------
# heuristic priors

LADDER_START = """
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . X . .
    . . . . . . . . .
    . . . O . . . . .
    . . O X . . . . .
    . . . . O . . . .
    . . . . . . . . .
    . . . . . . . . .
"""


def test_ladder_prior_favours_the_atari_that_captures(gammas):
    """Black D4 has two liberties.  White E4 ataris it into a ladder towards
    A1 that works; white D3 drives it towards G7, where a black stone breaks
    the ladder.  With prior_ladder the capturing atari gets the better prior,
    and once black is in atari at D3, running out there gets a worse one."""
    search = Search(SearchConfig(prior_ladder=20.0), gammas)
    plain = Search(SearchConfig(prior_ladder=0.0), gammas)
    board = Board.from_ascii(LADDER_START, WHITE)
    priors = search.priors(board, 7.5)
    assert priors[vertex(board, "E4")] > priors[vertex(board, "D3")] + 0.05
    before = plain.priors(board, 7.5)
    assert before[vertex(board, "E4")] == pytest.approx(before[vertex(board, "D3")])
    board.play(vertex(board, "E4"), WHITE)
    assert board.to_move == BLACK
    run_out = search.priors(board, 7.5)[vertex(board, "D3")]
    assert run_out < plain.priors(board, 7.5)[vertex(board, "D3")] - 0.5



# --------------------------------------------------------------------------
# selection


def test_the_root_blends_amaf_with_its_own_equivalence():
    """Two nodes with the same two children: A wins 60% of its 1,000
    visits and 40% of its 5,000 AMAF samples, B 50% and 70%.  RAVE's
    weight on AMAF is 0.65 at an equivalence of 3,000 (A 0.470, B 0.630)
    and 0.22 at 300 (A 0.556, B 0.544).  With rave_root 300 and
    rave_equiv 3,000 the root picks A and the node below it B; with
    rave_root 0 the root takes rave_equiv and picks B too.  (No
    exploration term, so the parents' visits do not matter.)"""
    tree = Tree(MIN_MEMORY)
    ti, tf, ei, ef = tree.arrays
    # root(0) -> 1 (A), 2 (B); 1 -> 3 (A), 4 (B): edge k leads to node k + 1
    for parent, first in ((ROOT, 0), (1, 2)):
        for k, (wins, amaf_wins) in zip((first, first + 1), ((600, 2000), (500, 3500))):
            init_edge(ei, ef, k, 10 + k)
            init_node(ti, tf, k + 1, 10 + k, parent)
            ei[EI_NODE, k] = k + 1
            tf[F_VISITS, k + 1], tf[F_WINS, k + 1] = 1000, wins
            ef[EF_AMAF_N, k], ef[EF_AMAF_W, k] = 5000, amaf_wins
        ti[T_FIRST, parent], ti[T_NCHILD, parent] = first, 2
        ti[T_STATE, parent] = EXPANDED
    tree.used, tree.edges_used = 5, 4

    def chosen(node, **cfg):
        params = params_vector(SearchConfig(c_explore=0.0, **cfg), 7.5, 19)
        return "AB"[select_child(ti, tf, ei, ef, node, params) % 2]

    assert chosen(ROOT, rave_root=300.0, rave_equiv=3000.0) == "A"
    assert chosen(1, rave_root=300.0, rave_equiv=3000.0) == "B"
    assert chosen(ROOT, rave_root=0.0, rave_equiv=3000.0) == "B"
    assert chosen(1, rave_equiv=300.0) == "A"


def test_a_counting_search_takes_the_count_s_equivalence_everywhere():
    """params_vector: a search that chooses a move blends AMAF by
    rave_equiv below the root and rave_root (0: rave_equiv) at it; one
    that counts the position by count_rave at every node (0: rave_equiv)."""
    def equivs(counting, **cfg):
        p = params_vector(SearchConfig(**cfg), 7.5, 19, counting)
        return p[P_RAVE_ROOT], p[P_RAVE_EQUIV]

    assert equivs(False) == (300.0, 300.0)
    assert equivs(True) == (3000.0, 3000.0)
    assert equivs(False, rave_root=1000.0) == (1000.0, 300.0)
    assert equivs(True, rave_root=1000.0, count_rave=500.0) == (500.0, 500.0)
    assert equivs(True, rave_equiv=400.0, count_rave=0.0) == (400.0, 400.0)
