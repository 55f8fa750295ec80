"""Tests for the policy-network input planes (engine/features.py).

Each plane is checked on small ASCII positions whose expected values are
worked out by hand.  Lower-case letters in a diagram mark empty points of
interest (they are read as ``.``).  A randomised test at the end compares
every plane, on seeded random positions, with a slow reference written here
from the rules: moves played on copies of the board, liberties counted by
hand, and a plain recursive ladder reader.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from engine import features as F
from engine.board import (BLACK, COLOR, EMPTY, HEAD, LIBS, NEXT, PASS, S_TO_MOVE,
                          S_W, WHITE, ZOBRIST, Board, is_legal, play)

# --------------------------------------------------------------------------
# helpers


def parse(text: str, to_move: int = BLACK) -> tuple[Board, dict[str, tuple[int, int]]]:
    """Board from a diagram, and the (row-from-top, col) of each marker."""
    rows = [line.split() for line in text.strip().splitlines() if line.strip()]
    marks = {}
    for i, row in enumerate(rows):
        for j, ch in enumerate(row):
            if ch not in "XxOo.+":
                marks[ch] = (i, j)
                row[j] = "."
    board = Board.from_ascii("\n".join(" ".join(r) for r in rows), to_move=to_move)
    return board, marks


def pt(board: Board, ij: tuple[int, int]) -> int:
    """Padded point of (row-from-top, col)."""
    i, j = ij
    return (i + 1) * board.width + j + 1


def ones(pl: np.ndarray) -> set[tuple[int, int]]:
    return {(int(i), int(j)) for i, j in zip(*np.nonzero(pl))}


def stones_at(text: str, ch: str) -> set[tuple[int, int]]:
    rows = [line.split() for line in text.strip().splitlines() if line.strip()]
    return {(i, j) for i, row in enumerate(rows) for j, c in enumerate(row) if c == ch}


# --------------------------------------------------------------------------
# plane list


def test_plane_list():
    assert F.FEATURE_VERSION == 1
    assert F.N_PLANES == 38 == len(F.PLANE_NAMES)
    assert (F.OWN, F.OPP, F.EMPTY_PT) == (0, 1, 2)
    assert (F.LIBS_1, F.LIBS_4P) == (3, 6)
    assert (F.AFTER_1, F.AFTER_6P) == (7, 12)
    assert F.LEGAL == 13
    assert (F.TURNS_1, F.TURNS_5P) == (14, 18)
    assert (F.CAPTURE_0, F.CAPTURE_6P) == (19, 25)
    assert F.LADDER_CAPTURE == 26
    assert (F.RANK_1D, F.RANK_9D) == (27, 35)
    assert (F.ONES, F.ON_BOARD) == (36, 37)


def test_helper_shape_dtype_and_orientation():
    board, _ = parse("""
        X . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . O
    """)
    pl = F.planes(board)
    assert pl.shape == (F.N_PLANES, 7, 7)
    assert pl.dtype == np.float32
    assert set(np.unique(pl)) <= {0.0, 1.0}
    # row 0 of the array is the top row of the diagram
    assert pl[F.OWN, 0, 0] == 1 and pl[F.OPP, 6, 6] == 1
    assert board.point(0, 6) == pt(board, (0, 0))
    u8 = F.planes(board, dtype=np.uint8)
    assert u8.dtype == np.uint8
    np.testing.assert_array_equal(u8, pl.astype(np.uint8))
    assert F.planes(Board(19)).shape == (F.N_PLANES, 19, 19)


def test_kernel_writes_into_out_and_leaves_board_alone():
    board, _ = parse("""
        . X O . .
        X O . O .
        . X O . .
        . . . . .
        . . . . .
    """)
    b0, s0 = board.b.copy(), board.s.copy()
    out = np.full((F.N_PLANES, 5, 5), 7, np.float32)     # stale values
    sb, ss = F.make_scratch(5)
    F.compute_planes(board.b, board.s, ZOBRIST, np.full(4, PASS, np.int32), 9,
                     out, sb, ss)
    np.testing.assert_array_equal(out, F.planes(board))
    np.testing.assert_array_equal(board.b, b0)
    np.testing.assert_array_equal(board.s, s0)


# --------------------------------------------------------------------------
# stone colour


COLOUR_POS = """
    . X . .
    O . . .
    . . X .
    . . . O
"""


def test_colour_planes_black_to_move():
    board, _ = parse(COLOUR_POS, BLACK)
    pl = F.planes(board)
    assert ones(pl[F.OWN]) == stones_at(COLOUR_POS, "X")
    assert ones(pl[F.OPP]) == stones_at(COLOUR_POS, "O")
    assert ones(pl[F.EMPTY_PT]) == stones_at(COLOUR_POS, ".")


def test_colour_planes_white_to_move():
    board, _ = parse(COLOUR_POS, WHITE)
    pl = F.planes(board)
    assert ones(pl[F.OWN]) == stones_at(COLOUR_POS, "O")
    assert ones(pl[F.OPP]) == stones_at(COLOUR_POS, "X")
    assert ones(pl[F.EMPTY_PT]) == stones_at(COLOUR_POS, ".")


def test_constant_planes():
    board, _ = parse(COLOUR_POS)
    pl = F.planes(board)
    assert pl[F.ONES].all() and pl[F.ON_BOARD].all()


# --------------------------------------------------------------------------
# liberties of the chain at each stone


def test_chain_liberties():
    board, _ = parse("""
        O X . . .
        . . . . .
        . . X X .
        . . . . .
        . . X . O
    """)
    pl = F.planes(board)
    assert ones(pl[F.LIBS_1]) == {(0, 0)}
    assert ones(pl[F.LIBS_2]) == {(0, 1), (4, 4)}
    assert ones(pl[F.LIBS_3]) == {(4, 2)}
    assert ones(pl[F.LIBS_4P]) == {(2, 2), (2, 3)}
    # the same from white's view: liberties do not depend on the colour
    pl_w = F.planes(parse("""
        O X . . .
        . . . . .
        . . X X .
        . . . . .
        . . X . O
    """, WHITE)[0])
    np.testing.assert_array_equal(pl_w[F.LIBS_1:F.LIBS_4P + 1], pl[F.LIBS_1:F.LIBS_4P + 1])


# --------------------------------------------------------------------------
# liberties after the move, and capture sizes


AFTER_POS = """
    a O . . d
    . . . e .
    . . X b .
    X . . . .
    O c . . .
"""


def test_liberties_after_move():
    board, m = parse(AFTER_POS)
    pl = F.planes(board)

    def after(name):
        k = [F.AFTER_1 + n for n in range(6) if pl[F.AFTER_1 + n][m[name]]]
        assert len(k) == 1, name
        return k[0] - F.AFTER_1 + 1

    assert after("a") == 1          # self-atari in the corner
    assert after("d") == 2          # empty corner
    assert after("c") == 3          # captures O in the corner: (3,1), (4,2)
    #                                 and the freed point (4,0)
    assert after("e") == 4          # alone in the open
    assert after("b") == 6          # joins X (2,2): its 3 other liberties
    #                                 and b's 3 empty neighbours
    # exact counts through the helper
    assert F.libs_after(board, pt(board, m["c"])) == 3
    assert F.libs_after(board, pt(board, m["b"])) == 6
    assert F.libs_after(board, pt(board, m["a"])) == 1
    # occupied points have no liberties-after plane
    assert pl[F.AFTER_1:F.AFTER_6P + 1, 2, 2].sum() == 0


def test_liberties_after_capture_of_several_chains():
    # X at c captures both O stones: its liberties are the two freed points
    # and (1,2).  X at d captures nothing and joins two X stones.
    board, m = parse("""
        X O c O X
        . X . X d
        . . . . .
        . . . . .
        . . . . .
    """)
    pl = F.planes(board)
    assert pl[F.CAPTURE_2][m["c"]] == 1
    assert F.libs_after(board, pt(board, m["c"])) == 3
    assert pl[F.AFTER_3][m["c"]] == 1
    # d joins X (0,4) and X (1,3): liberties (1,2), (2,3), (2,4)
    assert F.libs_after(board, pt(board, m["d"])) == 3
    assert pl[F.CAPTURE_0][m["d"]] == 1


def test_liberties_after_capture_next_to_a_joined_chain():
    board, m = parse("""
        X O . . .
        X X . . .
        O c . . .
        X . . . .
        . . . . .
    """)
    # O (2,0) has the one liberty c: X at c captures it and joins the X
    # chain (0,0), (1,0), (1,1).  Liberties after: the freed (2,0), which
    # touches both c and (1,0) but counts once, (3,1), (2,2) and (1,2);
    # O (0,1) keeps its liberty (0,2) and is not captured.
    pl = F.planes(board)
    assert pl[F.CAPTURE_1][m["c"]] == 1
    assert F.libs_after(board, pt(board, m["c"])) == 4
    assert pl[F.AFTER_4][m["c"]] == 1


def test_capture_sizes():
    board, m = parse("""
        . . X O O f
        . . . X X .
        . . . . . .
        X . . . . .
        O c . . . .
        . . e . . .
    """)
    pl = F.planes(board)
    assert pl[F.CAPTURE_2][m["f"]] == 1     # the two O stones at the top
    assert pl[F.CAPTURE_0][m["c"]] == 1     # O at the left still has a liberty
    assert pl[F.CAPTURE_0][m["e"]] == 1
    # every legal move sets exactly one capture plane, illegal ones none
    cap = pl[F.CAPTURE_0:F.CAPTURE_6P + 1].sum(axis=0)
    np.testing.assert_array_equal(cap, pl[F.LEGAL])
    board2, m2 = parse("""
        . . X O O f
        . . . X X .
        . . . . . .
        X . . . . .
        O c . . . .
        a . . . . .
    """)
    board2.play(pt(board2, m2["a"]), BLACK)     # X now ataris O at the left
    board2.to_move = BLACK
    pl2 = F.planes(board2)
    assert pl2[F.CAPTURE_1][m2["c"]] == 1
    # liberties after c: (3,1), (4,2), (5,1) and the freed point (4,0)
    assert pl2[F.AFTER_4][m2["c"]] == 1
    assert F.libs_after(board2, pt(board2, m2["c"])) == 4


def test_capture_six_or_more():
    board, m = parse("""
        O O O O O O a
        X X X X X X X
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
    """)
    pl = F.planes(board)
    assert pl[F.CAPTURE_6P][m["a"]] == 1
    assert pl[F.AFTER_6P][m["a"]] == 1
    assert F.libs_after(board, pt(board, m["a"])) == 13   # 6 freed + 7 below


# --------------------------------------------------------------------------
# legality


def test_legality_ko_and_suicide():
    board, m = parse("""
        . . . . .
        . . . . .
        . . . . t
        . . . . X
        . . . X s
    """, WHITE)
    pl = F.planes(board)
    assert pl[F.LEGAL][m["s"]] == 0          # suicide: no liberty, no capture
    assert pl[F.AFTER_1:F.AFTER_6P + 1][:, 4, 4].sum() == 0
    assert pl[F.CAPTURE_0:F.CAPTURE_6P + 1][:, 4, 4].sum() == 0
    assert pl[F.LEGAL][m["t"]] == 1
    assert F.planes(parse("""
        . . . . .
        . . . . .
        . . . . t
        . . . . X
        . . . X s
    """, BLACK)[0])[F.LEGAL][4, 4] == 1     # black may fill its own point
    board, m = parse("""
        . X O . .
        X O k O .
        . X O . .
        . . . . .
        . . s . .
    """, BLACK)
    board.play(pt(board, m["k"]), BLACK)     # takes the O stone: a ko
    assert board.to_move == WHITE
    ko = board.ko
    pl = F.planes(board)
    i, j = (ko // board.width - 1, ko % board.width - 1)
    assert (i, j) == (1, 1)
    assert pl[F.EMPTY_PT, 1, 1] == 1
    assert pl[F.LEGAL, 1, 1] == 0            # white may not retake the ko
    assert pl[F.AFTER_1:F.AFTER_6P + 1, 1, 1].sum() == 0
    assert pl[F.CAPTURE_0:F.CAPTURE_6P + 1, 1, 1].sum() == 0
    assert pl[F.LEGAL][m["s"]] == 1
    # occupied points are illegal
    assert (pl[F.LEGAL] * (1 - pl[F.EMPTY_PT])).sum() == 0
    # black may fill the ko point (white's ko, not black's)
    board.to_move = BLACK
    assert F.planes(board)[F.LEGAL, 1, 1] == 1


def test_suicide_point_for_the_player_to_move_only():
    text = """
        . O . . .
        O s O . .
        . O . . .
        . . . . .
        . . . . .
    """
    board, m = parse(text, BLACK)
    assert F.planes(board)[F.LEGAL][m["s"]] == 0
    board, m = parse(text, WHITE)
    assert F.planes(board)[F.LEGAL][m["s"]] == 1


# --------------------------------------------------------------------------
# turns since


def test_turns_since():
    board = Board(5)
    moves = [(0, 0), (4, 4), (1, 1), (3, 3), (2, 2), (0, 4)]   # (row-from-top, col)
    pts = [pt(board, ij) for ij in moves]
    for p in pts:
        board.play(p)
    history = pts[::-1]                  # most recent first
    pl = F.planes(board, history=history)
    assert ones(pl[F.TURNS_1]) == {(0, 4)}
    assert ones(pl[F.TURNS_2]) == {(2, 2)}
    assert ones(pl[F.TURNS_3]) == {(3, 3)}
    assert ones(pl[F.TURNS_4]) == {(1, 1)}
    assert ones(pl[F.TURNS_5P]) == {(0, 0), (4, 4)}
    # a pass counts as a move; a longer history is fine
    pl = F.planes(board, history=[PASS] + history)
    assert ones(pl[F.TURNS_1]) == set()
    assert ones(pl[F.TURNS_2]) == {(0, 4)}
    assert ones(pl[F.TURNS_5P]) == {(0, 0), (4, 4), (1, 1)}
    # no history: every stone is old
    pl = F.planes(board)
    assert ones(pl[F.TURNS_5P]) == set(map(tuple, moves))
    assert pl[F.TURNS_1:F.TURNS_4 + 1].sum() == 0
    # turns planes are exactly the stones
    stones = pl[F.OWN] + pl[F.OPP]
    for h in ([], history, [PASS, PASS] + history):
        pl = F.planes(board, history=h)
        np.testing.assert_array_equal(pl[F.TURNS_1:F.TURNS_5P + 1].sum(axis=0), stones)


def test_turns_since_captured_and_replayed_stones():
    board, m = parse("""
        . X . . .
        X O a . .
        . X . . .
        . . . . .
        . . . . .
    """, BLACK)
    a = pt(board, m["a"])
    board.play(a)                            # X captures O at (1,1)
    captured = pt(board, (1, 1))
    board.play(pt(board, (4, 4)))            # O elsewhere
    # the history says O played at (1,1) three moves ago: it is gone now
    pl = F.planes(board, history=[pt(board, (4, 4)), a, captured])
    assert pl[F.TURNS_3, 1, 1] == 0 and pl[F.EMPTY_PT, 1, 1] == 1
    assert pl[F.TURNS_1, 4, 4] == 1 and pl[F.TURNS_2, 1, 2] == 1
    # a point played twice in the history: the most recent move counts
    pl = F.planes(board, history=[a, PASS, a])
    assert pl[F.TURNS_1, 1, 2] == 1 and pl[F.TURNS_3, 1, 2] == 0


# --------------------------------------------------------------------------
# ladders


LADDER = """
    . . . . . . . . .
    . . . . . . . . .
    . . . X . . . . .
    . . X O a . . . .
    . . X b . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
    . . . . . . . . .
"""


def with_stone(text: str, ij: tuple[int, int], ch: str) -> str:
    rows = [line.split() for line in text.strip().splitlines() if line.strip()]
    rows[ij[0]][ij[1]] = ch
    return "\n".join(" ".join(r) for r in rows)


def test_working_ladder():
    board, m = parse(LADDER)
    pl = F.planes(board)
    # atari from the right drives O down the staircase to the edge
    assert ones(pl[F.LADDER_CAPTURE]) == {m["a"]}
    assert F.is_ladder_capture(board, pt(board, m["a"]))
    # atari from below lets O extend to three liberties
    assert not F.is_ladder_capture(board, pt(board, m["b"]))
    # white to move: nothing of black's has two liberties next to a move
    board_w, _ = parse(LADDER, WHITE)
    assert F.planes(board_w)[F.LADDER_CAPTURE].sum() == 0


# The ladder runs O (3,3) -> (4,3), (4,4), (5,4), (5,5), (6,5), (6,6), (7,6),
# (7,7), (8,7), with X playing (3,4), (5,3), (4,5), (6,4), (5,6), (7,5),
# (6,7), (8,6), (7,8).  An O stone on the path, or on a point X needs,
# breaks it.
@pytest.mark.parametrize("ij", [(7, 6), (6, 7), (7, 7), (5, 6), (6, 4)])
def test_ladder_breaker(ij):
    # a white stone on the ladder's path breaks it ...
    board, m = parse(with_stone(LADDER, ij, "O"))
    assert F.planes(board)[F.LADDER_CAPTURE][m["a"]] == 0
    # ... and a black stone there does not
    board, m = parse(with_stone(LADDER, ij, "X"))
    assert F.planes(board)[F.LADDER_CAPTURE][m["a"]] == 1


def test_ladder_breaker_far_off_the_path_does_not_matter():
    board, m = parse(with_stone(LADDER, (0, 8), "O"))
    assert F.planes(board)[F.LADDER_CAPTURE][m["a"]] == 1


def test_ladder_escape_by_capturing_a_chasing_stone():
    # X ataris at a; O extends to (4,3) (liberties (5,3), (4,4)).  X (4,4)
    # lets O out at (5,3), so X plays (5,3) and O extends to (4,4): now the
    # first chasing stone a = (3,4) has the one liberty (3,5), because of
    # O (2,4).  Whichever atari X plays next, O captures a and escapes.
    text = """
        . . . . . . . . .
        . . . . . . . . .
        . . . X O . . . .
        . . X O a . . . .
        . . X b . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
        . . . . . . . . .
    """
    board, m = parse(text)
    pl = F.planes(board)
    assert pl[F.LADDER_CAPTURE][m["a"]] == 0
    assert pl[F.LADDER_CAPTURE][m["b"]] == 0      # O connects to (2,4)
    assert ref_ladder(board, pt(board, m["a"]), BLACK) is False
    # without the capture (a black stone at (3,5) protects a) it works
    board, m = parse(with_stone(text, (3, 5), "X"))
    assert F.planes(board)[F.LADDER_CAPTURE][m["a"]] == 1
    assert ref_ladder(board, pt(board, m["a"]), BLACK) is True


def test_ladder_on_the_first_line():
    # O on the edge with liberties (6,0) and a: X at a drives it into the
    # corner, where it has a single liberty left
    text = """
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . . . . . . .
        . X . . . . .
        . O a . . . .
    """
    board, m = parse(text)
    assert F.planes(board)[F.LADDER_CAPTURE][m["a"]] == 1
    assert ref_ladder(board, pt(board, m["a"]), BLACK) is True


def test_ladder_capture_needs_two_liberties():
    # O has three liberties: no move is a ladder capture
    board, _ = parse("""
        . . . . .
        . . X . .
        . . O . .
        . . . . .
        . . . . .
    """)
    assert F.planes(board)[F.LADDER_CAPTURE].sum() == 0


# --------------------------------------------------------------------------
# rank


@pytest.mark.parametrize("rank", range(1, 10))
def test_rank_planes(rank):
    board, _ = parse(COLOUR_POS)
    pl = F.planes(board, rank=rank)
    for r in range(1, 10):
        assert pl[F.RANK_1D + r - 1].all() == (r == rank)
        assert pl[F.RANK_1D + r - 1].any() == (r == rank)


def test_unknown_rank_leaves_rank_planes_empty():
    board, _ = parse(COLOUR_POS)
    assert F.planes(board, rank=0)[F.RANK_1D:F.RANK_9D + 1].sum() == 0


# --------------------------------------------------------------------------
# reference model


def chain_of(b, s, p):
    stones = [p]
    q = b[NEXT, p]
    while q != p:
        stones.append(int(q))
        q = b[NEXT, q]
    return stones


def libs_of(b, s, p):
    w = int(s[S_W])
    return {q + d for q in chain_of(b, s, p) for d in (-w, -1, 1, w)
            if b[COLOR, q + d] == EMPTY}


def ref_hunter_wins(b, s, prey, hc, depth):
    libs = libs_of(b, s, prey)
    if len(libs) == 1:
        return bool(is_legal(b, s, libs.pop(), hc))
    if len(libs) >= 3 or depth > 200:
        return False
    for x in sorted(libs):
        if is_legal(b, s, x, hc):
            b2, s2 = b.copy(), s.copy()
            play(b2, s2, ZOBRIST, x, hc)
            if not ref_prey_escapes(b2, s2, prey, 3 - hc, depth + 1):
                return True
    return False


def ref_prey_escapes(b, s, prey, pc, depth):
    libs = libs_of(b, s, prey)
    if len(libs) >= 2:
        return True
    w = int(s[S_W])
    moves = set()
    for q in chain_of(b, s, prey):
        for d in (-w, -1, 1, w):
            if b[COLOR, q + d] == 3 - pc:
                hl = libs_of(b, s, q + d)
                if len(hl) == 1:
                    moves |= hl
    moves |= libs
    for x in sorted(moves):
        if is_legal(b, s, x, pc):
            b2, s2 = b.copy(), s.copy()
            play(b2, s2, ZOBRIST, x, pc)
            if not ref_hunter_wins(b2, s2, prey, 3 - pc, depth + 1):
                return True
    return False


def ref_ladder_prey(board: Board, p: int, c: int, h: int) -> bool:
    """c plays the legal move p, an atari on the chain at h: captured?"""
    b2, s2 = board.b.copy(), board.s.copy()
    play(b2, s2, ZOBRIST, p, c)
    return not ref_prey_escapes(b2, s2, h, 3 - c, 0)


def ref_ladder(board: Board, p: int, c: int) -> bool:
    b, s = board.b, board.s
    if b[COLOR, p] != EMPTY or not is_legal(b, s, p, c):
        return False
    w = board.width
    for h in {int(b[HEAD, p + d]) for d in (-w, -1, 1, w) if b[COLOR, p + d] == 3 - c}:
        if b[LIBS, h] == 2 and ref_ladder_prey(board, p, c, h):
            return True
    return False


def ref_planes(board: Board, history, rank: int) -> np.ndarray:
    n, w = board.size, board.width
    b, s = board.b, board.s
    c = int(s[S_TO_MOVE])
    out = np.zeros((F.N_PLANES, n, n), np.float32)
    out[F.ONES] = out[F.ON_BOARD] = 1
    if 1 <= rank <= 9:
        out[F.RANK_1D + rank - 1] = 1
    age = {}
    for t, p in enumerate(list(history)[:4]):
        if p != PASS and b[COLOR, p] in (BLACK, WHITE) and p not in age:
            age[p] = t + 1
    for i in range(n):
        for j in range(n):
            p = (i + 1) * w + j + 1
            k = b[COLOR, p]
            if k == EMPTY:
                out[F.EMPTY_PT, i, j] = 1
                if not is_legal(b, s, p, c):
                    continue
                out[F.LEGAL, i, j] = 1
                b2, s2 = b.copy(), s.copy()
                captured = play(b2, s2, ZOBRIST, p, c)
                libs = len(libs_of(b2, s2, p))
                assert libs == b2[LIBS, b2[HEAD, p]]
                out[F.AFTER_1 + min(libs, 6) - 1, i, j] = 1
                out[F.CAPTURE_0 + min(captured, 6), i, j] = 1
                out[F.LADDER_CAPTURE, i, j] = ref_ladder(board, p, c)
            else:
                out[F.OWN if k == c else F.OPP, i, j] = 1
                out[F.LIBS_1 + min(len(libs_of(b, s, p)), 4) - 1, i, j] = 1
                out[F.TURNS_1 + age.get(p, 5) - 1, i, j] = 1
    return out


def random_position(size: int, n_moves: int, rng: random.Random):
    """A position after up to n_moves random legal moves (no eye filling),
    and its move history, most recent first."""
    board = Board(size)
    history = []
    for _ in range(n_moves):
        c = board.to_move
        cands = [p for p in board.points()
                 if board.b[COLOR, p] == EMPTY and is_legal(board.b, board.s, p, c)
                 and not all(board.b[COLOR, p + d] in (c, 3)
                             for d in (-board.width, -1, 1, board.width))]
        p = rng.choice(cands) if cands else PASS
        play(board.b, board.s, ZOBRIST, p, c)
        history.insert(0, p)
    return board, history


@pytest.mark.parametrize("size,n_moves,seed", [
    (5, 12, 1), (7, 25, 2), (9, 40, 3), (9, 60, 4), (9, 90, 5), (13, 120, 6),
    (9, 150, 7), (7, 70, 8)])
def test_planes_match_reference_on_random_positions(size, n_moves, seed):
    rng = random.Random(seed)
    for k in range(12):
        board, history = random_position(size, n_moves + k, rng)
        rank = rng.randint(0, 9)
        got = F.planes(board, history=history, rank=rank)
        want = ref_planes(board, history, rank)
        for plane in range(F.N_PLANES):
            bad = np.argwhere(got[plane] != want[plane])
            assert len(bad) == 0, (F.PLANE_NAMES[plane], bad.tolist(), str(board))


def test_ladders_match_reference_on_many_positions():
    """More ladder candidates than the plane test: many random positions,
    every legal move that ataris a two-liberty chain."""
    rng = random.Random(11)
    checked = 0
    found = 0
    for k in range(60):
        board, _ = random_position(9, 30 + k, rng)
        c = board.to_move
        w = board.width
        b = board.b
        for p in board.points():
            if b[COLOR, p] != EMPTY or not is_legal(b, board.s, p, c):
                continue
            if not any(b[COLOR, p + d] == 3 - c and b[LIBS, b[HEAD, p + d]] == 2
                       for d in (-w, -1, 1, w)):
                continue
            want = ref_ladder(board, p, c)
            assert F.is_ladder_capture(board, p) == want, (p, str(board))
            checked += 1
            found += want
    assert checked > 100 and 0 < found < checked


def test_scratch_stamps_wrap_around():
    """The mark stamps restart when they run high, between positions."""
    rng = random.Random(5)
    board, history = random_position(9, 50, rng)
    want = F.planes(board, history=history)
    sb, ss = F.make_scratch(9)
    out = np.zeros_like(want)
    h = F.history_array(history)
    for stamp in (F.STAMP_RESET - 3, None):      # crosses, then resets
        if stamp is not None:
            ss[F.SS_STAMP] = stamp
        F.compute_planes(board.b, board.s, ZOBRIST, h, 9, out, sb, ss)
        np.testing.assert_array_equal(out, want)
    assert ss[F.SS_STAMP] < F.STAMP_RESET


def test_planes_for_a_busy_19x19_position():
    rng = random.Random(19)
    board, history = random_position(19, 260, rng)
    got = F.planes(board, history=history, rank=5)
    want = ref_planes(board, history, 5)
    np.testing.assert_array_equal(got, want)


def test_ladder_reader_and_shortcuts_each_match_reference():
    """The exact shortcuts on the real board and the full read, each on its
    own, against the reference, for every ladder candidate."""
    rng = random.Random(23)
    n_quick = n_read = 0
    for k in range(40):
        board, _ = random_position(9 + 2 * (k % 3), 35 + 2 * k, rng)
        b, s = board.b, board.s
        c = board.to_move
        w = board.width
        sb, ss = F.make_scratch(board.size)
        for p in board.points():
            if b[COLOR, p] != EMPTY or not is_legal(b, s, p, c):
                continue
            for h in {int(b[HEAD, p + d]) for d in (-w, -1, 1, w)
                      if b[COLOR, p + d] == 3 - c and b[LIBS, b[HEAD, p + d]] == 2}:
                want = ref_ladder_prey(board, p, c, h)
                F._begin(sb, ss)
                quick = F._quick_ladder(b, s, p, c, h, sb, ss)
                if quick >= 0:
                    assert quick == want, (p, h, str(board))
                    n_quick += 1
                F._load_colours(b, s, sb, ss)
                assert F._read_ladder(b, s, p, c, h, sb, ss) == want, (p, h, str(board))
                n_read += 1
                # the read leaves the scratch colours as it found them
                np.testing.assert_array_equal(sb[F.LCOL, :w * w], b[COLOR, :w * w])
    assert n_read > 200 and n_quick > 100
