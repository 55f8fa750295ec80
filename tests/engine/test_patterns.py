"""3x3 playout patterns: the code, its symmetries, the shipped table and the
learner."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from sgfmill import sgf as sgfmill_sgf

from engine import learn_patterns
from engine.board import (BLACK, EMPTY, PASS, S_LAST, WALL, WHITE, ZOBRIST, Board,
                          is_eyeish, is_legal)
from engine.patterns import (DATA_PATH, N_CODES, PATTERN_VERSION, canonical_table,
                             code_has_empty_side, code_is_eye, load_gammas, load_metadata,
                             pattern_code, transform_code)

# neighbour slots in code order
NW, N, NE, W, E, SW, S, SE = range(8)
OWN, OPP, OFF = 1, 2, 3


def make_code(fields: dict[int, int] | None = None, atari: str = "") -> int:
    """Code from {slot: value} (unlisted slots empty) and the orthogonal
    neighbours in atari, as a string over 'NWES'."""
    code = 0
    for slot, v in (fields or {}).items():
        code |= v << (2 * slot)
    for ch in atari:
        code |= 1 << (16 + "NWES".index(ch))
    return code


def code_at(board: Board, col: int, row: int, c: int) -> int:
    return int(pattern_code(board.b, board.s, board.point(col, row), c))


# --------------------------------------------------------------------------
# pattern_code


def test_empty_point_in_the_middle_is_code_zero():
    board = Board(5)
    assert code_at(board, 2, 2, BLACK) == 0
    assert code_at(board, 2, 2, WHITE) == 0


def test_edges_and_corners_are_off_board():
    board = Board(5)
    # bottom-left corner: everything west and south is off the board
    assert code_at(board, 0, 0, BLACK) == make_code({NW: OFF, W: OFF, SW: OFF, S: OFF, SE: OFF})
    # top-right corner
    assert code_at(board, 4, 4, BLACK) == make_code({NW: OFF, N: OFF, NE: OFF, E: OFF, SE: OFF})
    # bottom edge, not a corner
    assert code_at(board, 2, 0, BLACK) == make_code({SW: OFF, S: OFF, SE: OFF})
    # left edge
    assert code_at(board, 0, 2, WHITE) == make_code({NW: OFF, W: OFF, SW: OFF})
    # second line: no off-board neighbour
    assert code_at(board, 1, 1, BLACK) == 0


def test_own_and_opponent_swap_with_the_colour_to_play():
    board = Board.from_ascii("""
        . . . . .
        . X . O .
        . . . X .
        . O . . .
        . . . . .
    """)
    # point (2, 2): NW (1,3) X, NE (3,3) O, E (3,2) X, SW (1,1) O
    black = code_at(board, 2, 2, BLACK)
    white = code_at(board, 2, 2, WHITE)
    assert black == make_code({NW: OWN, NE: OPP, E: OWN, SW: OPP})
    assert white == make_code({NW: OPP, NE: OWN, E: OPP, SW: OWN})


def test_atari_bits_flag_orthogonal_chains_with_one_liberty():
    board = Board.from_ascii("""
        . . . . .
        . . . . .
        . . . . .
        . . . . .
        O X O . .
    """)
    # X at (1,0) has the single liberty (1,1); the O at (0,0) too, but it is
    # a diagonal neighbour of (1,1) and diagonals carry no atari bit.
    assert board.liberties(board.point(1, 0)) == 1
    assert board.liberties(board.point(0, 0)) == 1
    assert code_at(board, 1, 1, WHITE) == make_code({SW: OWN, S: OPP, SE: OWN}, atari="S")
    assert code_at(board, 1, 1, BLACK) == make_code({SW: OPP, S: OWN, SE: OPP}, atari="S")
    # from (0,1): S is the O in atari, SE the X (diagonal, no bit)
    assert code_at(board, 0, 1, BLACK) == make_code(
        {NW: OFF, W: OFF, SW: OFF, S: OPP, SE: OWN}, atari="S")


def test_atari_bits_on_two_stone_chain():
    board = Board.from_ascii("""
        . . . . . .
        . O O . . .
        O X X . . .
        . O O . . .
        . . . . . .
        . . . . . .
    """)
    x = board.point(1, 3)
    assert board.liberties(x) == 1                     # only (3,3)
    # (3,3) from White: W is the X chain in atari (capture), the rest empty
    # except NW (2,4) and SW (2,2), both O.
    assert code_at(board, 3, 3, WHITE) == make_code({NW: OWN, W: OPP, SW: OWN}, atari="W")
    # a chain with two liberties sets no bit: (0,4)'s neighbours
    assert board.liberties(board.point(1, 4)) > 1
    assert code_at(board, 1, 5, BLACK) == make_code({NW: OFF, N: OFF, NE: OFF, S: OPP, SE: OPP})


def _reference_code(board: Board, p: int, c: int) -> int:
    """pattern_code in plain Python over the Board API."""
    w = board.width
    code = 0
    for k, d in enumerate((-w - 1, -w, -w + 1, -1, 1, w - 1, w, w + 1)):
        col = board.color(p + d)
        v = 3 if col == WALL else 0 if col == EMPTY else 1 if col == c else 2
        code |= v << (2 * k)
    for k, d in enumerate((-w, -1, 1, w)):
        col = board.color(p + d)
        if col in (BLACK, WHITE) and board.liberties(p + d) == 1:
            code |= 1 << (16 + k)
    return code


def _random_empty_points(seed: int):
    """(board, empty point, colour) for every empty point and both colours
    after every move of seeded random games on 5x5 and 9x9 (no own-eye
    filling)."""
    rng = np.random.default_rng(seed)
    for size in (5, 9):
        board = Board(size)
        for _ in range(3 * size * size):
            c = board.to_move
            moves = [p for p in board.legal_moves(c) if not is_eyeish(board.b, board.s, p, c)]
            if not moves:
                break
            board.play(int(rng.choice(moves)), c)
            for p in board.points():
                if board.color(p) == EMPTY:
                    for colour in (BLACK, WHITE):
                        yield board, p, colour


def test_pattern_code_matches_a_python_reference_on_random_positions():
    for board, p, colour in _random_empty_points(7):
        assert pattern_code(board.b, board.s, p, colour) == _reference_code(board, p, colour)


def test_eyes_and_legality_read_from_the_code_agree_with_the_board():
    """The rollout policy reads eyes and sure legality off the pattern
    code: code_is_eye is is_eyeish, and an empty side means legal."""
    eyes = sure = 0
    for board, p, colour in _random_empty_points(11):
        code = pattern_code(board.b, board.s, p, colour)
        eye = is_eyeish(board.b, board.s, p, colour)
        assert code_is_eye(code) == eye
        eyes += eye
        if code_has_empty_side(code):
            assert is_legal(board.b, board.s, p, colour)
            sure += 1
    assert eyes > 50 and sure > 500         # both cases were really met


# --------------------------------------------------------------------------
# symmetries and the shipped table


@pytest.fixture(scope="module")
def gamma():
    return load_gammas()


def _transforms(rows: list[str]) -> list[list[str]]:
    """The 8 rotations/reflections of a square ASCII diagram."""
    grid = [list(r) for r in rows]
    out = []
    for _ in range(4):
        grid = [list(r) for r in zip(*grid[::-1])]          # rotate 90°
        out.append(["".join(r) for r in grid])
        out.append(["".join(r[::-1]) for r in grid])       # mirror
    return out


DIAGRAMS = [
    # (diagram with '*' at the point to examine, colour to play)
    ([".....",
      ".X*..",
      "..OX.",
      ".O...",
      "....."], BLACK),
    (["*X...",
      ".O...",
      ".....",
      ".....",
      "....."], WHITE),
    (["OX*..",
      ".....",
      ".....",
      ".....",
      "....."], BLACK),
    ([".....",
      ".OO..",
      "OXX*.",
      ".OX..",
      "....."], WHITE),
    ([".....",
      ".....",
      "..XO.",
      "..O*.",
      "....."], BLACK),
]


@pytest.mark.parametrize("rows,colour", DIAGRAMS)
def test_the_8_symmetries_of_a_position_get_the_same_gamma(gamma, rows, colour):
    codes = set()
    weights = set()
    for t_rows in _transforms(rows):
        r = next(i for i, line in enumerate(t_rows) if "*" in line)
        col = t_rows[r].index("*")
        board = Board.from_ascii("\n".join(line.replace("*", ".") for line in t_rows),
                                 to_move=colour)
        code = code_at(board, col, len(t_rows) - 1 - r, colour)
        codes.add(code)
        weights.add(float(gamma[code]))
    assert len(codes) > 1                # the diagrams are not symmetric
    assert len(weights) == 1


def test_gamma_table_is_constant_on_symmetry_classes(gamma):
    rng = np.random.default_rng(3)
    sample = rng.integers(0, N_CODES, 20000)
    canon = canonical_table()
    for t in range(8):
        moved = transform_code(sample, t)
        assert np.array_equal(canon[moved], canon[sample])
        assert np.array_equal(gamma[moved], gamma[sample])
    assert np.array_equal(transform_code(sample, 0), sample)
    assert np.array_equal(canon[canon], canon)          # canonical codes are fixed points
    assert np.all(canon <= np.arange(N_CODES))


def test_shipped_table_shape_and_content(gamma):
    assert gamma.shape == (N_CODES,) and gamma.dtype == np.float32
    assert np.all(gamma > 0) and np.all(np.isfinite(gamma))
    meta = load_metadata()
    assert meta["version"] == PATTERN_VERSION
    assert meta["games"] >= 1000 and meta["positions"] > meta["games"]
    assert isinstance(meta["date"], str)
    assert gamma[0] == pytest.approx(1.0)                      # reference: empty 3x3
    # capturing a stone in atari beats an empty point; the first-line
    # corner point is worse than an empty point in the open
    capture = make_code({N: OPP, NW: OWN, NE: OWN}, atari="N")
    assert gamma[capture] > 10 * gamma[0]
    corner = make_code({NW: OFF, W: OFF, SW: OFF, S: OFF, SE: OFF})
    assert gamma[corner] < gamma[0]
    assert DATA_PATH.stat().st_size < 1 << 20


def test_load_gammas_errors_name_the_file(tmp_path):
    missing = tmp_path / "nope.npz"
    with pytest.raises(ValueError, match="nope.npz"):
        load_gammas(missing)
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"not a zip file")
    with pytest.raises(ValueError, match="junk.npz"):
        load_gammas(junk)
    partial = tmp_path / "partial.npz"
    np.savez(partial, version=np.int32(PATTERN_VERSION), codes=np.array([0], np.int32))
    with pytest.raises(ValueError, match="partial.npz.*gammas"):
        load_gammas(partial)
    old = tmp_path / "old.npz"
    np.savez(old, version=np.int32(PATTERN_VERSION + 1), codes=np.array([0], np.int32),
             gammas=np.array([1.0], np.float32), default_gamma=np.float32(0.1))
    with pytest.raises(ValueError, match="old.npz.*version"):
        load_gammas(old)
    noncanon = tmp_path / "noncanon.npz"
    np.savez(noncanon, version=np.int32(PATTERN_VERSION), codes=np.array([1 << 14], np.int32),
             gammas=np.array([1.0], np.float32), default_gamma=np.float32(0.1))
    with pytest.raises(ValueError, match="noncanon.npz.*canonical"):
        load_gammas(noncanon)


def test_load_gammas_expands_classes_and_default(tmp_path):
    path = tmp_path / "p.npz"
    code = make_code({N: OWN})                     # canonical form of "one own stone orthogonal"
    canon = int(canonical_table()[code])
    np.savez(path, version=np.int32(PATTERN_VERSION), codes=np.array([0, canon], np.int32),
             gammas=np.array([1.0, 5.0], np.float32), default_gamma=np.float32(0.25))
    g = load_gammas(path)
    for d in (N, W, E, S):
        assert g[make_code({d: OWN})] == 5.0
    assert g[0] == 1.0
    assert g[make_code({NW: OWN})] == 0.25


# --------------------------------------------------------------------------
# the learner


def _write_games(directory, n_games: int, size: int = 7, moves: int = 30, seed: int = 0):
    """Short games whose moves prefer points next to the previous move, so
    the patterns carry information; written with sgfmill."""
    rng = np.random.default_rng(seed)
    directory.mkdir(parents=True, exist_ok=True)
    for g in range(n_games):
        board = Board(size)
        game = sgfmill_sgf.Sgf_game(size)
        for _ in range(moves):
            c = board.to_move
            legal = [p for p in board.legal_moves(c) if not is_eyeish(board.b, board.s, p, c)]
            if not legal:
                break
            last = int(board.s[S_LAST])
            near = [p for p in legal if last != PASS and abs(p - last) in (1, board.width)]
            p = int(rng.choice(near if near and rng.random() < 0.8 else legal))
            board.play(p, c)
            col, row = board.coords(p)
            game.extend_main_sequence().set_move("b" if c == BLACK else "w", (row, col))
        sub = directory / ("a" if g % 2 else "b")
        sub.mkdir(exist_ok=True)
        (sub / f"game{g}.sgf").write_bytes(game.serialise())


def test_learner_fits_tiny_games_and_improves_the_likelihood(tmp_path, capsys):
    data = tmp_path / "games"
    _write_games(data, 6)
    files = learn_patterns.find_games(str(data))
    assert len(files) == 6 and files == sorted(files)
    comp = learn_patterns.collect(files, "test")
    assert comp.games == 6 and comp.decisions > 100
    codes, gammas, history = learn_patterns.fit(comp, 15)
    assert history[-1] > history[0] + 1.0
    assert np.all(gammas > 0) and np.all(np.isfinite(gammas))

    out = tmp_path / "p.npz"
    rc = learn_patterns.main([str(data), "--games", "5", "--out", str(out),
                              "--iterations", "10", "--seed", "3"])
    assert rc == 0
    printed = capsys.readouterr()
    assert "top-1 accuracy" in printed.out and "held-out games 1" in printed.out
    assert "iteration" in printed.err and "log-likelihood" in printed.err
    table = load_gammas(out)
    assert table.shape == (N_CODES,)
    meta = load_metadata(out)
    assert meta["games"] == 5 and meta["positions"] > 0
    assert 0.0 <= meta["heldout_top1"] <= 1.0


def test_competitions_cover_every_candidate():
    """Each recorded decision counts exactly the legal, non-eye-filling
    empty points, and the chosen point is one of them."""
    rng = np.random.default_rng(5)
    board = Board(7)
    pts, cols = [], []
    for _ in range(40):
        c = board.to_move
        legal = [p for p in board.legal_moves(c) if not is_eyeish(board.b, board.s, p, c)]
        p = int(rng.choice(legal))
        pts.append(p)
        cols.append(c)
        board.play(p, c)
    replay = Board(7)
    canon = canonical_table()
    n = len(pts)
    out_cls = np.empty(n * 49, np.int32)
    out_cnt = np.empty(n * 49, np.int32)
    out_ptr = np.empty(n + 1, np.int64)
    out_win = np.empty(n, np.int32)
    nd, ne, played = learn_patterns.collect_game(
        replay.b, replay.s, ZOBRIST, canon, np.array(pts, np.int64), np.array(cols, np.int64),
        np.zeros(N_CODES, np.int32), np.zeros(N_CODES, np.int32),
        out_cls, out_cnt, out_ptr, out_win)
    assert played == n and nd == n
    check = Board(7)
    for j in range(nd):
        c = cols[j]
        legal = [p for p in check.legal_moves(c) if not is_eyeish(check.b, check.s, p, c)]
        want: dict[int, int] = {}
        for p in legal:
            k = int(canon[pattern_code(check.b, check.s, p, c)])
            want[k] = want.get(k, 0) + 1
        got = {int(out_cls[e]): int(out_cnt[e]) for e in range(out_ptr[j], out_ptr[j + 1])}
        assert got == want
        assert out_win[j] == canon[pattern_code(check.b, check.s, pts[j], c)]
        check.play(pts[j], c)


def test_missing_or_empty_directory_is_a_clear_error(tmp_path, capsys):
    missing = tmp_path / "no-such-dir"
    assert learn_patterns.main([str(missing)]) != 0
    assert str(missing) in capsys.readouterr().err
    empty = tmp_path / "empty"
    empty.mkdir()
    assert learn_patterns.main([str(empty)]) != 0
    err = capsys.readouterr().err
    assert str(empty) in err and "no .sgf files" in err


def test_command_line_exit_code(tmp_path):
    missing = tmp_path / "absent"
    proc = subprocess.run([sys.executable, "-m", "engine.learn_patterns", str(missing)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert str(missing) in proc.stderr
