"""nets.data: metadata parsing, the cache builder, symmetries and the
position sampler (equivariance of planes and targets)."""

from __future__ import annotations

import numpy as np
import pytest

from engine.board import BLACK, PASS, WHITE, Board, IllegalMove
from engine.features import LEGAL, EMPTY_PT, RANK_1D, planes
from gtp.vertex import parse_vertex
from nets import data as D
from nets_helpers import first_real_sgfs, make_sgf_dir, random_game, write_sgf

# --------------------------------------------------------------------------
# metadata


@pytest.mark.parametrize("text, rank", [
    ("7d", 7), ("7D", 7), (" 3 dan ", 3), ("9段", 9), ("5단", 5), ("12d", 9), ("0d", 1),
    ("1p", 9), ("P7段", 9), ("pro", 9), ("3k", 1), ("18级", 1), ("2d?", 2),
    ("", None), (None, None), ("?", None), ("abc", None)])
def test_parse_rank(text, rank) -> None:
    assert D.parse_rank(text) == rank


def test_root_ranks_utf8_and_root_only() -> None:
    data = ("(;GM[1]SZ[19]PB[x\\]y]BR[9段]WR[P7段]C[WR[1d];B[aa]]\n;B[pd]BR[1d];W[dd])"
            ).encode("utf-8")
    assert D.root_ranks(data) == ("9段", "P7段")
    assert D.root_ranks(b"(;GM[1]SZ[19];B[aa])") == ("", "")


@pytest.mark.parametrize("km, komi", [(650, 6.5), (750, 7.5), (375, 7.5), (0, 0.0),
                                      (6.5, 6.5), (0.5, 0.5), (-20, -20.0)])
def test_normalise_komi(km, komi) -> None:
    assert D.normalise_komi(km) == komi


# --------------------------------------------------------------------------
# symmetries


def test_symmetry_tables_match_numpy() -> None:
    n = 5
    a = np.arange(n * n).reshape(n, n)
    got = {D.apply_symmetry(t, a).tobytes() for t in range(8)}
    want = {x.tobytes() for x in (a, np.rot90(a), np.rot90(a, 2), np.rot90(a, 3),
                                  a[:, ::-1], a[::-1, :], a.T, np.rot90(a, 2).T)}
    assert got == want
    gather, scatter = D.symmetry_tables(n)
    for t in range(8):
        assert np.array_equal(a.reshape(-1)[gather[t]], D.apply_symmetry(t, a).reshape(-1))
        # scatter: where a point goes
        for p in range(n * n):
            i, j = divmod(int(scatter[t, p]), n)
            assert D.apply_symmetry(t, a)[i, j] == p
        assert scatter[t, n * n] == n * n   # pass stays pass


def _transform_coords(t: int, v, size: int):
    """(col, row) after symmetry t, through the point-index tables."""
    if v is None:
        return None
    col, row = v
    idx = (size - 1 - row) * size + col
    q = D.transform_move(t, idx, size)
    i, j = divmod(q, size)
    return (j, size - 1 - i)


def _replay(moves, size=19):
    board = Board(size)
    hist = []
    for c, v in moves:
        p = PASS if v is None else board.point(*v)
        board.play(p, c)
        hist.insert(0, p)
    return board, hist[:4]


def _games_for_equivariance():
    games = [random_game(7, 90), random_game(8, 120)]
    from engine import sgf
    for path in first_real_sgfs(2):
        rec = sgf.load(str(path))
        games.append(rec.moves[:150])
    return games


@pytest.mark.parametrize("t", range(8))
def test_planes_are_equivariant(t: int) -> None:
    """transform(planes(board)) == planes(transform(board)), and the move
    played moves with the board."""
    for moves in _games_for_equivariance():
        cut = len(moves) - 1
        while moves[cut][1] is None:
            cut -= 1
        history, (colour, nxt) = moves[:cut], moves[cut]
        board, hist = _replay(history)
        board2, hist2 = _replay([(c, _transform_coords(t, v, 19)) for c, v in history])
        board.to_move = board2.to_move = colour
        x = planes(board, hist, rank=7, dtype=np.uint8)
        x2 = planes(board2, hist2, rank=7, dtype=np.uint8)
        assert np.array_equal(D.apply_symmetry(t, x), x2)
        # the target: index of the move in the planes' layout
        idx = (18 - nxt[1]) * 19 + nxt[0]
        i, j = divmod(D.transform_move(t, idx, 19), 19)
        col2, row2 = _transform_coords(t, nxt, 19)
        assert (i, j) == (18 - row2, col2)
        assert x2[LEGAL, i, j] == 1


# --------------------------------------------------------------------------
# the cache


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("sgf")
    info = make_sgf_dir(root, n_good=6, n_moves=50)
    out = root / "cache.npz"
    summary = D.build_cache(root, out, val_fraction=0.3, workers=1, log=None)
    return info, summary, D.load_cache(out)


def test_build_counts_and_skips(built) -> None:
    info, summary, cache = built
    assert cache.n_games == len(info["good"]) == summary["games"]
    assert summary["skipped"] == info["skipped"]
    assert summary["files"] == len(info["good"]) + sum(info["skipped"].values())
    assert summary["sources"] == {"srcA": 3, "srcB": 3}
    assert cache.size == 19 and cache.moves.dtype == np.int16
    assert cache.moves.min() >= 0 and cache.moves.max() <= 361
    assert len(cache.offsets) == cache.n_games + 1
    assert set(np.unique(cache.colours)) <= {BLACK, WHITE}


def test_build_moves_ranks_komi(built) -> None:
    info, _, cache = built
    from engine import sgf
    by_source = {s.decode(): g for g, s in enumerate(cache.source)}
    want_ranks = {0: (7, 5), 1: (9, 9), 2: (9, 1), 3: (9, 2)}
    for i, path in enumerate(info["good"]):
        g = by_source[f"{path.parent.name}/{path.name}"]
        rec = sgf.load(str(path))
        moves, colours = cache.game_moves(g)
        assert len(moves) == len(rec.moves)
        for (c, v), m, cc in zip(rec.moves, moves, colours):
            assert cc == c
            assert m == (361 if v is None else (18 - v[1]) * 19 + v[0])
        assert tuple(cache.ranks[g]) == want_ranks[i % 4]
        assert cache.komi[g] == pytest.approx(7.5)


def test_split_is_by_game(built) -> None:
    _, summary, cache = built
    tr, va = cache.split()
    assert len(tr) >= 1 and len(va) >= 1 and len(tr) + len(va) == cache.n_games
    assert not set(tr) & set(va)
    assert summary["val_games"] == len(va)
    # the rule is per game (CRC-32 of its path), so a game lands on the same
    # side whatever else is in the cache; only when the rule puts every game
    # on one side is one game moved over
    raw = np.array([D.is_validation(src.decode(), 0.3) for src in cache.source])
    if 0 < raw.sum() < len(raw):
        assert np.array_equal(raw, cache.val)
    else:
        assert (raw != cache.val).sum() == 1


def test_cli_errors(tmp_path, capsys) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert D.main(["build", str(empty), str(tmp_path / "x.npz")]) == 2
    assert "no SGF files" in capsys.readouterr().err
    assert D.main(["build", str(tmp_path / "nowhere"), str(tmp_path / "x.npz")]) == 2
    assert "nowhere" in capsys.readouterr().err
    assert D.main(["info", str(tmp_path / "missing.npz")]) == 2
    assert "missing.npz" in capsys.readouterr().err
    foreign = tmp_path / "foreign.npz"
    np.savez(foreign, a=np.zeros(3))
    assert D.main(["info", str(foreign)]) == 2
    assert "foreign.npz" in capsys.readouterr().err


def test_cli_build_limit(tmp_path, capsys) -> None:
    root = tmp_path / "d"
    for i in range(5):
        write_sgf(root / f"g{i}.sgf", random_game(i, 12))
    out = tmp_path / "c.npz"
    assert D.main(["build", str(root), str(out), "--limit", "3", "--workers", "1"]) == 0
    text = capsys.readouterr().out
    assert "3 games kept" in text and "skipped: none" in text
    assert D.load_cache(out).n_games == 3


def test_subset_keeps_games_whole(built, tmp_path, capsys) -> None:
    _, _, cache = built
    out = tmp_path / "sub.npz"
    assert D.main(["subset", cache.path, str(out), "--games", "4", "--seed", "3"]) == 0
    assert "4 games kept" in capsys.readouterr().out
    sub = D.load_cache(out)
    assert sub.n_games == 4 and sub.summary["subset_of"] == cache.path
    by_source = {s: g for g, s in enumerate(cache.source)}
    for g in range(sub.n_games):
        f = by_source[sub.source[g]]
        for a, b in zip(sub.game_moves(g), cache.game_moves(f)):
            assert np.array_equal(a, b)
        assert tuple(sub.ranks[g]) == tuple(cache.ranks[f])
        assert sub.komi[g] == cache.komi[f] and sub.val[g] == cache.val[f]
    assert sub.summary["positions"] == sub.positions()
    assert sub.summary["val_games"] == int(sub.val.sum())
    # more games than there are: all of them
    assert D.main(["subset", cache.path, str(out), "--games", "99"]) == 0
    assert D.load_cache(out).n_games == cache.n_games
    capsys.readouterr()
    assert D.main(["subset", cache.path, str(out), "--games", "0"]) == 2
    assert "--games" in capsys.readouterr().err
    assert D.main(["subset", str(tmp_path / "none.npz"), str(out), "--games", "2"]) == 2
    assert "none.npz" in capsys.readouterr().err


# --------------------------------------------------------------------------
# positions


def test_sampler_positions_match_replay(built) -> None:
    """Every emitted position is the symmetry-transformed planes of the
    replayed game at that move, with the rank of the player to move, and
    its target is the transformed move actually played."""
    _, _, cache = built
    s = D.PositionSampler(cache, positions_per_game=4, seed=3)
    x, y, col, where = s.batch(24, step=5, info=True)
    assert x.shape == (24, 38, 19, 19) and x.dtype == np.uint8
    assert len(set(where["sym"].tolist())) > 1
    for k in range(24):
        g, t, sym = int(where["game"][k]), int(where["move"][k]), int(where["sym"][k])
        moves, colours = cache.game_moves(g)
        board, hist = cache.replay(g, t)
        c = int(colours[t])
        board.to_move = c
        want = planes(board, hist[:4], rank=int(cache.ranks[g, c - 1]), dtype=np.uint8)
        assert np.array_equal(x[k], D.apply_symmetry(sym, want))
        assert col[k] == c - 1
        assert y[k] == D.transform_move(sym, int(moves[t]), 19) != 361
        i, j = divmod(int(y[k]), 19)
        assert x[k, LEGAL, i, j] == 1 and x[k, EMPTY_PT, i, j] == 1
        assert x[k, RANK_1D + cache.ranks[g, c - 1] - 1].all()


def test_replay_goes_through_a_repeated_position(tmp_path) -> None:
    """A record that repeats a position (Japanese rules allow it: here a
    double ko with a pass) is kept by the builder and replayed by
    GameCache.replay, which the benchmarks use, although the engine's
    rules (positional superko) forbid its last move."""
    def v(text):
        return parse_vertex(text, 19)
    # two kos: Black may take at E11 (capturing D11), White at Q11 (P11)
    black = ["D12", "C11", "D10", "P11", "Q12", "R11", "Q10"]
    white = ["E12", "D11", "F11", "E10", "P12", "O11", "P10"]
    moves = [m for pair in zip(black, white) for m in ((BLACK, v(pair[0])), (WHITE, v(pair[1])))]
    moves += [(BLACK, v("E11")), (WHITE, v("Q11")), (BLACK, None), (WHITE, v("D11")),
              (BLACK, v("P11"))]                  # the board after move 14 again
    write_sgf(tmp_path / "sgf" / "ko.sgf", moves)
    D.build_cache(tmp_path / "sgf", tmp_path / "ko.npz", val_fraction=0, workers=1, log=None)
    cache = D.load_cache(tmp_path / "ko.npz")
    assert cache.n_games == 1
    board, hist = cache.replay(0)
    start, _ = cache.replay(0, 14)
    assert str(board) == str(start)
    assert hist[:3] == [board.point(*v("P11")), board.point(*v("D11")), PASS]
    with pytest.raises(IllegalMove, match="superko"):
        start, _ = cache.replay(0, 18)
        start.play(start.point(*v("P11")), BLACK)


def test_sampler_is_deterministic_and_samples_per_game(built) -> None:
    _, _, cache = built
    tr, _ = cache.split()
    a = D.PositionSampler(cache, tr, positions_per_game=8, seed=1)
    b = D.PositionSampler(cache, tr, positions_per_game=8, seed=1)
    x1, y1, c1, w1 = a.batch(32, step=9, info=True)
    a.batch(32, step=10)
    x2, y2, c2 = b.batch(32, step=9)
    assert np.array_equal(x1, x2) and np.array_equal(y1, y2) and np.array_equal(c1, c2)
    assert not np.array_equal(a.batch(32, step=11)[1], y1)
    # several positions of each replayed game, only from training games
    assert len(np.unique(w1["game"])) <= 32 // 8 + 2
    assert set(w1["game"].tolist()) <= set(tr.tolist())
    # a different stream (another process of a distributed run) differs
    other = D.PositionSampler(cache, tr, positions_per_game=8, seed=1, stream=1)
    assert not np.array_equal(other.batch(32, step=9)[1], y1)


def test_fixed_positions_no_symmetry(built) -> None:
    _, _, cache = built
    _, va = cache.split()
    x, y, c = D.fixed_positions(cache, va, 10)
    x2, y2, c2 = D.fixed_positions(cache, va, 10)
    assert np.array_equal(y, y2) and len(y) == 10


def test_position_dataset_order_independent_of_workers(built) -> None:
    torch = pytest.importorskip("torch")
    _, _, cache = built
    ds = D.PositionDataset(cache, None, 16, start_step=3, seed=2)
    sampler = D.PositionSampler(cache, None, seed=2)
    loader = torch.utils.data.DataLoader(ds, batch_size=None, num_workers=2)
    it = iter(loader)
    for step in range(3, 7):
        x, y, c = next(it)
        ex, ey, ec = sampler.batch(16, step)
        assert torch.equal(y, torch.from_numpy(ey)) and torch.equal(x, torch.from_numpy(ex))
    del it


def test_next_targets_are_the_later_moves_under_the_symmetry(built) -> None:
    """darkforest's extra targets: the moves 1..k after each position's
    move, transformed as its planes are; IGNORE past the game's end."""
    _, _, cache = built
    s = D.PositionSampler(cache, positions_per_game=4, seed=3)
    _, y, _, where = s.batch(24, step=5, info=True)
    nxt = s.next_targets(where, 2)
    assert nxt.shape == (24, 2) and nxt.dtype == np.int64
    for k in range(24):
        g, t, sym = int(where["game"][k]), int(where["move"][k]), int(where["sym"][k])
        moves, _ = cache.game_moves(g)
        for j in (1, 2):
            want = (D.transform_move(sym, int(moves[t + j]), 19)
                    if t + j < len(moves) and moves[t + j] != 361 else D.IGNORE)
            assert nxt[k, j - 1] == want
    # the last two moves of a game: one later move, then none
    g = 0
    n = len(cache.game_moves(g)[0])
    last = {"game": np.array([g, g]), "move": np.array([n - 2, n - 1]), "sym": np.array([3, 3])}
    got = s.next_targets(last, 2)
    assert got[0, 0] == D.transform_move(3, int(cache.game_moves(g)[0][n - 1]), 19)
    assert got[0, 1] == got[1, 0] == got[1, 1] == D.IGNORE


def test_position_dataset_with_next_moves(built) -> None:
    torch = pytest.importorskip("torch")
    _, _, cache = built
    ds = D.PositionDataset(cache, None, 16, start_step=3, seed=2, next_moves=2)
    sampler = D.PositionSampler(cache, None, seed=2)
    x, y, c = next(iter(ds))
    ex, ey, ec, where = sampler.batch(16, 3, info=True)
    assert y.shape == (16, 3)
    assert torch.equal(y[:, 0], torch.from_numpy(ey)) and torch.equal(x, torch.from_numpy(ex))
    assert torch.equal(y[:, 1:], torch.from_numpy(sampler.next_targets(where, 2)))
