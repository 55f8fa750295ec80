"""bench.accuracy: a tiny checkpoint on a few synthetic SGF games (the
numbers, the sampling, the planes against an independent replay) and the
errors for missing or unusable inputs."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from bench import accuracy as A  # noqa: E402
from engine.board import PASS, Board  # noqa: E402
from engine.features import LEGAL, planes  # noqa: E402
from nets import data as D  # noqa: E402
from nets.checkpoint import save_checkpoint  # noqa: E402
from nets.models import build_model  # noqa: E402
from nets_helpers import finished_game, make_sgf_dir, random_game, write_sgf  # noqa: E402

N_MOVES = 40
RANKS = [("7d", "5d"), ("9段", "P7段"), ("", "3k"), ("1p", "2d")]


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    root = tmp_path_factory.mktemp("acc")
    torch.manual_seed(3)
    ck = save_checkpoint(root / "tiny.pt", build_model("small6", width=8, layers=2),
                         metadata={"steps": 7})
    games = root / "games"
    for i in range(4):
        write_sgf(games / f"g{i}.sgf", random_game(200 + i, N_MOVES), ranks=RANKS[i])
    mixed = root / "mixed"
    info = make_sgf_dir(mixed, n_good=3, n_moves=30)
    return {"root": root, "ck": ck, "games": games, "mixed": mixed, "mixed_info": info}


def _nonpass(path) -> int:
    from engine import sgf
    return sum(v is not None for _, v in sgf.load(str(path)).moves)


def test_cli_all_positions_of_all_games(setup, capsys) -> None:
    out_json = setup["root"] / "r.json"
    rc = A.main([str(setup["ck"]), str(setup["games"]), "--games", "10", "--batch", "32",
                 "--threads", "1", "--json", str(out_json)])
    text = capsys.readouterr().out
    assert rc == 0
    r = json.loads(out_json.read_text())
    want = sum(_nonpass(p) for p in setup["games"].glob("*.sgf"))
    assert r["games"] == 4 and r["positions"] == want
    assert r["sample"] == "all non-pass moves"
    assert r["illegal_targets"] == 0
    assert r["steps"] == 7 and r["model"] == "small6"
    rates = [r[f"top{k}"]["rate"] for k in (1, 5, 10)]
    assert 0.0 <= rates[0] <= rates[1] <= rates[2] <= 1.0
    for k in (1, 5, 10):
        a = r[f"top{k}"]
        lo, hi = a["wilson95"]
        assert 0.0 <= lo <= a["rate"] <= hi <= 1.0
        assert a["hits"] == round(a["rate"] * want)
    # an untrained net on a nearly empty board: about as good as chance
    # (the move among ~330 legal points), far from perfect
    assert rates[2] < 0.5
    assert 0 < r["log_loss"] < 10
    assert r["inference_positions_per_s"] > 0
    for word in ("data dir", str(setup["games"]), "games", "positions", "top-1", "top-5",
                 "top-10", "Wilson", "positions/s"):
        assert word in text, word
    assert f"{100 * rates[0]:.2f}%" in text


def test_positions_sample_is_seeded(setup) -> None:
    kw = dict(positions=50, batch=16, threads=1, log=None)
    a = A.evaluate(setup["ck"], setup["games"], seed=1, **kw)
    b = A.evaluate(setup["ck"], setup["games"], seed=1, **kw)
    assert a["positions"] == 50 and a["sample"].startswith("drawn uniformly")
    assert [a[f"top{k}"]["hits"] for k in (1, 5, 10)] == \
        [b[f"top{k}"]["hits"] for k in (1, 5, 10)]
    assert a["log_loss"] == pytest.approx(b["log_loss"])
    # more positions than there are: all of them
    c = A.evaluate(setup["ck"], setup["games"], positions=10**6, batch=64, threads=1,
                   log=None)
    assert c["sample"] == "all non-pass moves"


def test_choose_positions_uniform_distinct(setup, tmp_path) -> None:
    D.build_cache(setup["games"], tmp_path / "c.npz", val_fraction=0.0, workers=1, log=None)
    cache = D.load_cache(tmp_path / "c.npz")
    nn = cache.size * cache.size
    g, picks, starts = A.choose_positions(cache, 60, seed=5)
    assert len(picks) == 60 and starts[-1] == 60 and len(starts) == len(g) + 1
    seen = set()
    for i, game in enumerate(g):
        p = picks[starts[i]:starts[i + 1]]
        assert np.all(np.diff(p) > 0)
        a = cache.offsets[game]
        assert np.all(cache.moves[a + p] != nn)          # never a pass
        seen |= {(int(game), int(t)) for t in p}
    assert len(seen) == 60
    g, picks, starts = A.choose_positions(cache, None, seed=5)
    assert len(picks) == cache.positions()


def test_planes_match_an_independent_replay(setup, tmp_path) -> None:
    """The kernel path gives the planes, ranks, colours and targets that the
    engine's Board and features.planes give for the same records."""
    from engine import sgf

    D.build_cache(setup["games"], tmp_path / "c.npz", val_fraction=0.0, workers=1, log=None)
    cache = D.load_cache(tmp_path / "c.npz")
    g, picks, starts = A.choose_positions(cache, None, seed=0)
    xs, ys, cs = zip(*A.replay_chunks(cache, g, picks, starts, 25))
    x, y, c = np.concatenate(xs), np.concatenate(ys), np.concatenate(cs)
    k = 0
    for gi in g:
        src = cache.source[gi].decode()
        rec = sgf.load(str(setup["games"] / src))
        ranks = D.root_ranks((setup["games"] / src).read_bytes())
        rank = [D.parse_rank(r) or D.DEFAULT_RANK for r in ranks]
        board, hist = Board(19), []
        for colour, v in rec.moves:
            p = PASS if v is None else board.point(*v)
            if v is not None:
                board.to_move = colour
                want = planes(board, hist[::-1], rank[colour - 1], np.uint8)
                assert np.array_equal(x[k], want), (src, k)
                i, j = divmod(int(y[k]), 19)
                assert board.point(j, 18 - i) == p and c[k] == colour - 1
                assert x[k, LEGAL, i, j] == 1
                k += 1
            board.play(p, colour)
            hist.append(p)
    assert k == len(y)


def test_skipped_records_are_reported(setup, capsys) -> None:
    rc = A.main([str(setup["ck"]), str(setup["mixed"]), "--games", "100", "--threads", "1"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "3 of 9 files read" in out and "6 skipped" in out


def _fails(argv, capsys, *names) -> None:
    rc = A.main(argv)
    err = capsys.readouterr().err
    assert rc != 0 and rc == 2
    for name in names:
        assert name in err, err


def test_errors_name_the_path(setup, tmp_path, capsys) -> None:
    ck, games = str(setup["ck"]), str(setup["games"])
    missing = str(tmp_path / "nope.pt")
    _fails([missing, games], capsys, missing, "does not exist")
    garbage = tmp_path / "garbage.pt"
    garbage.write_bytes(b"not a checkpoint")
    _fails([str(garbage), games], capsys, str(garbage))
    _fails([ck, str(tmp_path / "no_such_dir")], capsys, str(tmp_path / "no_such_dir"))
    empty = tmp_path / "empty"
    empty.mkdir()
    _fails([ck, str(empty)], capsys, str(empty), "no SGF")
    unusable = tmp_path / "unusable"
    write_sgf(unusable / "small.sgf", random_game(1, 10, size=9), size=9)
    _fails([ck, str(unusable)], capsys, str(unusable), "no usable game")
    _fails([ck, games, "--positions", "0"], capsys, "--positions")


def test_a_game_cache_counts_as_its_games(setup) -> None:
    """A .npz cache of the games (as carried to a GPU machine without
    sgfmill) gives the numbers the SGF folder gives; --compare-precision
    reports fp32 and bf16 with their top-1 agreement."""
    cache = setup["root"] / "games.npz"
    D.build_cache(setup["games"], cache, val_fraction=0.0, workers=1, log=None)
    kw = dict(positions=50, seed=2, batch=16, threads=1, precision="fp32", log=None)
    from_sgf = A.evaluate(setup["ck"], setup["games"], **kw)
    from_npz = A.evaluate(setup["ck"], cache, **kw)
    for key in ("positions", "games", "top1", "top5", "top10", "log_loss"):
        assert from_npz[key] == from_sgf[key], key
    both = A.evaluate(setup["ck"], cache, positions=50, seed=2, batch=16, threads=1,
                      compare=True, log=None)
    assert both["precision"] == "bf16" and both["fp32"]["top1"] == from_sgf["top1"]
    assert 0.9 <= both["top1_agreement"]["rate"] <= 1.0
    with pytest.raises(A.AccuracyError, match="missing.npz"):
        A.evaluate(setup["ck"], setup["root"] / "missing.npz", log=None)


def test_against_compares_two_nets_position_by_position(setup, capsys) -> None:
    """--against scores a second net on the same positions: its rates are
    those it gets alone, the paired counts account for the difference of
    the two top-1 rates, and a net against itself differs by nothing."""
    torch.manual_seed(4)
    other = save_checkpoint(setup["root"] / "other.pt", build_model("small6", width=8, layers=2),
                            metadata={"steps": 9})
    kw = dict(positions=60, seed=1, batch=16, threads=1, precision="fp32", log=None)
    r = A.evaluate(setup["ck"], setup["games"], against=other, **kw)
    alone = A.evaluate(other, setup["games"], **kw)
    o = r["against"]
    assert o["steps"] == 9 and o["top1"] == alone["top1"] and o["top5"] == alone["top5"]
    assert o["log_loss"] == pytest.approx(alone["log_loss"])
    assert (o["top1_only_this"] - o["top1_only_other"]
            == r["top1"]["hits"] - alone["top1"]["hits"])
    lo, hi = o["top1_difference95"]
    assert lo <= o["top1_difference"] <= hi
    assert o["log_loss_difference"] == pytest.approx(r["log_loss"] - alone["log_loss"])
    assert 0 < o["top1_mcnemar_p"] <= 1
    itself = A.evaluate(setup["ck"], setup["games"], against=setup["ck"], **kw)["against"]
    assert (itself["top1_only_this"], itself["top1_only_other"]) == (0, 0)
    assert itself["top1_difference95"] == [0.0, 0.0] and itself["top1_mcnemar_p"] == 1.0
    assert itself["log_loss_difference95"] == [0.0, 0.0]
    assert A.main([str(setup["ck"]), str(setup["games"]), "--positions", "60", "--threads", "1",
                   "--against", str(other)]) == 0
    out = capsys.readouterr().out
    assert f"against      {other} (small6, step 9), the same positions: top-1" in out
    assert "paired 95%" in out and "McNemar p" in out
    _fails([str(setup["ck"]), str(setup["games"]), "--against", str(setup["root"] / "nope.pt")],
           capsys, "nope.pt")
    _fails([str(setup["ck"]), str(setup["games"]), "--against", str(other),
            "--compare-precision"], capsys, "do not go together")


def test_a_net_with_a_pass_output_is_scored_on_every_move(tmp_path) -> None:
    """res9 (pass output): every move of the games is a position, passes
    included (target index 81, always legal); a net that ranks the pass
    first gets exactly the passes right."""
    games = tmp_path / "g9"
    n_moves = 0
    for i in range(3):
        moves = finished_game(500 + i, 30)
        write_sgf(games / f"g{i}.sgf", moves, size=9)
        n_moves += len(moves)
    net = build_model("res9", blocks=1, width=8)
    with torch.no_grad():
        net.pass_head.bias.fill_(50.0)          # the pass first, always
    ck = save_checkpoint(tmp_path / "res9.pt", net, metadata={})
    r = A.evaluate(ck, games, threads=1, batch=16, log=None)
    assert r["positions"] == n_moves and r["sample"] == "all moves"
    assert r["top1"]["hits"] == 6 and r["illegal_targets"] == 0


class CornerLogits(torch.nn.Module):
    """Logit 5 on the first point of the board it is shown, 0 elsewhere."""

    def forward(self, x, color):
        out = torch.zeros(x.shape[0], x.shape[-1] ** 2)
        out[:, 0] = 5.0
        return out


def test_the_mean_of_the_symmetries_maps_each_image_back() -> None:
    """Each image's favourite point (A9 of what the net is shown) is one of
    the four corners, twice: with 8 symmetries the played corner J1 gets
    the mean of two favoured and six plain probabilities; with 1 the net
    sees only A9."""
    n = 9
    x = np.zeros((1, LEGAL + 1, n, n), np.uint8)
    x[:, LEGAL] = 1
    y = np.array([n * n - 1])                       # J1, the corner opposite A9
    col = np.array([0])
    big, small = np.exp(5.0) / (np.exp(5.0) + 80), 1 / (np.exp(5.0) + 80)
    one = A.score_batch(CornerLogits(), x, y, col)
    assert one[1] == 0 and one["best"][0] == 0
    assert one["nll"] == pytest.approx(-np.log(small), rel=1e-5)
    eight = A.score_batch(CornerLogits(), x, y, col, symmetries=8)
    assert eight[5] == 1 and eight["best"][0] in (0, n - 1, n * n - n, n * n - 1)
    assert eight["nll"] == pytest.approx(-np.log((2 * big + 6 * small) / 8), rel=1e-5)
