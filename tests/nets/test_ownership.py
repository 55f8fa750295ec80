"""The ownership net (GoCNN, seed 002): its input planes, its shapes, the
labelled positions it learns from, and a short training run."""

from __future__ import annotations

import json
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from engine.board import BLACK, Board  # noqa: E402
from engine.features import planes  # noqa: E402
from nets import data as D  # noqa: E402
from nets import ownership as O  # noqa: E402
from nets.checkpoint import load_checkpoint  # noqa: E402
from nets.models import build_model, gocnn_planes  # noqa: E402
from nets_helpers import make_sgf_dir  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def _ascii(plane: np.ndarray) -> str:
    return "\n".join(" ".join("1" if v else "." for v in row) for row in plane)


def test_gocnn_planes_from_table1() -> None:
    board = Board.from_ascii("""
        . X O . .
        X O O . .
        . X . . .
        O . . . .
        . O . . .
    """, to_move=BLACK)
    x = torch.from_numpy(planes(board)[None])
    got = gocnn_planes(x)[0].numpy()
    assert got.shape == (7, 5, 5)
    expected = {
        0: "B5",                       # own chains of one liberty
        1: "A4",                       # two
        2: "B3",                       # three or more
        3: "", 4: "",
        5: "C5 B4 C4 A2 B1",           # opponent chains of three or more
        6: "A1",                       # black may not play there (suicide)
    }
    for k, names in expected.items():
        want = np.zeros((5, 5), bool)
        for name in names.split():
            col, row = board.coords(board.at(name))
            want[4 - row, col] = True
        assert _ascii(got[k]) == _ascii(want), k


@pytest.mark.parametrize("name", ["gocnn", "gocnn38", "res6own"])
@pytest.mark.parametrize("size", [9, 19])
def test_ownership_net_shapes(name, size) -> None:
    net = build_model(name, width=8)
    x = torch.rand(3, 38, size, size).round()
    out = net(x, torch.tensor([0, 1, 0]))
    assert out.shape == (3, size * size) and out.dtype == torch.float32
    assert torch.equal(net.both(x)[:, 1].reshape(3, -1)[1], out[1])


@pytest.fixture(scope="module")
def labelled(tmp_path_factory):
    """A cache of synthetic games and a labels file: every game's owner
    map is its last position's area (no dead stones)."""
    root = tmp_path_factory.mktemp("own")
    games = root / "games"
    make_sgf_dir(games, n_good=10, n_moves=120)
    cache_path = root / "cache.npz"
    D.build_cache(games, cache_path, val_fraction=0.3, workers=1, log=None)
    cache = D.load_cache(cache_path)
    from bench.ownership_labels import owner_map
    lines = []
    for g in range(cache.n_games):
        board = Board(19)
        moves, colours = cache.game_moves(g)
        for m, c in zip(moves, colours):
            board.play(-1 if m == 361 else board.point(int(m) % 19, 18 - int(m) // 19), int(c))
        own = owner_map(board, [])
        lines.append({"source": cache.source[g].decode(), "agrees": True,
                      "owner": "".join({1: "X", -1: "O", 0: "."}[int(v)] for v in own)})
    lines.append({"source": "elsewhere.sgf", "agrees": True, "owner": "." * 361})
    lines.append({"source": cache.source[0].decode() + "x", "agrees": False})
    labels = root / "labels.jsonl"
    labels.write_text("".join(json.dumps(d) + "\n" for d in lines))
    return cache_path, labels


def test_targets_follow_the_symmetry_and_the_player_to_move(labelled) -> None:
    cache_path, labels = labelled
    cache = D.load_cache(cache_path)
    games, owners, counts = O.load_labels(labels, cache)
    assert counts == {"labels": 12, "used": 10, "disagree": 1, "not_in_cache": 1}
    sampler = O.OwnershipSampler(cache, games, owners, seed=3)
    x, t, col, where = sampler.batch(64, 5)
    assert set(np.unique(t)) <= {0.0, 0.5, 1.0}
    row = {int(g): k for k, g in enumerate(games)}
    for i in range(64):
        own = owners[row[int(where["game"][i])]].reshape(19, 19)
        own = D.apply_symmetry(int(where["sym"][i]), own).reshape(-1)
        sign = 1 if col[i] == 0 else -1
        assert np.array_equal(t[i], 0.5 + 0.5 * sign * own)


def test_late_draws_positions_from_the_last_quarter(labelled) -> None:
    cache_path, labels = labelled
    cache = D.load_cache(cache_path)
    games, owners, _ = O.load_labels(labels, cache)
    x, t, col, where = O.OwnershipSampler(cache, games, owners, late=1.0, seed=2).batch(64, 0)
    for g, m in zip(where["game"], where["move"]):
        moves, _ = cache.game_moves(int(g))
        nonpass = np.flatnonzero(moves != 361)
        assert m in nonpass[3 * len(nonpass) // 4:]


def test_training_lowers_the_loss_and_records_the_task(labelled, tmp_path) -> None:
    cache_path, labels = labelled
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "nets.train", "--data", str(cache_path), "--labels", str(labels),
           "--model", "gocnn", "--width", "8", "--layers", "2", "--batch", "32",
           "--val-positions", "128", "--threads", "1", "--steps", "40", "--eval-every", "40",
           "--optimizer", "adam", "--lr", "0.01", "--out", str(out)]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    rows = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert rows[-1]["val_loss"] < rows[0]["val_loss"] - 0.05
    assert rows[-1]["point_acc"] > 0.6 and "acc_early" in rows[-1]
    ck = load_checkpoint(out / "last.pt")
    assert ck.metadata["config"]["task"] == "ownership"
    assert ck.metadata["data"]["labels"]["used"] == 10


def test_labels_are_required_and_only_for_ownership(labelled, tmp_path, capsys) -> None:
    from nets import train as T
    cache_path, labels = labelled
    base = ["--data", str(cache_path), "--width", "8", "--layers", "2", "--steps", "1",
            "--threads", "1"]
    assert T.main(base + ["--model", "gocnn", "--out", str(tmp_path / "a")]) == 2
    assert "--labels" in capsys.readouterr().err
    assert T.main(base + ["--model", "small6", "--labels", str(labels),
                          "--out", str(tmp_path / "b")]) == 2
    assert "learns moves" in capsys.readouterr().err
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    assert T.main(base + ["--model", "gocnn", "--labels", str(bad),
                          "--out", str(tmp_path / "c")]) == 2
    assert "bad.jsonl line 1" in capsys.readouterr().err


def test_init_trunk_starts_from_a_policy_nets_trunk(labelled, tmp_path, capsys) -> None:
    """res6own --init-trunk res6.pt: the residual trunk (weights and batch
    norm statistics) is the policy net's, the head is new; a net of
    another shape is refused, naming the file."""
    from nets import train as T
    from nets.checkpoint import save_checkpoint
    policy = build_model("res6", width=8)
    with torch.no_grad():
        for t in policy.state_dict().values():
            t.copy_(torch.rand_like(t.float()).to(t.dtype) if t.is_floating_point() else t)
    src = tmp_path / "policy.pt"
    save_checkpoint(src, policy, metadata={})
    own = build_model("res6own", width=8)
    T.init_trunk(own, str(src), verbose=False)
    theirs, mine = policy.state_dict(), own.state_dict()
    trunk = [k for k in mine if k.startswith(("stem", "blocks."))]
    assert len(trunk) == 78             # stem + batch norm: 6; 6 blocks of 12
    assert all(torch.equal(mine[k], theirs[k]) for k in trunk)
    cache_path, labels = labelled
    base = ["--data", str(cache_path), "--labels", str(labels), "--model", "res6own",
            "--steps", "1", "--threads", "1"]
    assert T.main(base + ["--width", "16", "--init-trunk", str(src),
                          "--out", str(tmp_path / "a")]) == 2
    assert "policy.pt has no trunk of this model's shape" in capsys.readouterr().err
    assert T.main(base + ["--init-trunk", str(tmp_path / "none.pt"),
                          "--out", str(tmp_path / "b")]) == 2
    assert "none.pt does not exist" in capsys.readouterr().err


def test_labels_from_several_files_count_each_game_once(labelled, tmp_path) -> None:
    """Two labellers' files (overlapping) give the games of both, once."""
    cache_path, labels = labelled
    cache = D.load_cache(cache_path)
    lines = labels.read_text().splitlines(keepends=True)
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text("".join(lines[:6]))
    b.write_text("".join(lines[4:]))
    games, owners, counts = O.load_labels(labels, cache)
    games2, owners2, counts2 = O.load_labels([a, b], cache)
    assert np.array_equal(games, games2) and np.array_equal(owners, owners2)
    assert counts2 == counts == {"labels": 12, "used": 10, "disagree": 1, "not_in_cache": 1}
    from nets import train as T
    out = tmp_path / "run"
    assert T.main(["--data", str(cache_path), "--labels", f"{a},{b}", "--model", "gocnn",
                   "--width", "8", "--layers", "1", "--steps", "1", "--threads", "1",
                   "--out", str(out)]) == 0
    assert load_checkpoint(out / "last.pt").metadata["data"]["labels"]["used"] == 10


def test_packed_labels_read_as_the_json_lines(tmp_path) -> None:
    """nets.ownership pack: the agreeing labels, a twentieth of the size,
    read back as the JSON lines read."""
    from nets.ownership import main as ownership_main, pack_labels, read_labels
    lines = [{"source": "a.sgf", "agrees": True, "owner": "XO." * 3},
             {"source": "b.sgf", "agrees": False, "owner": "X" * 9},
             {"source": "c.sgf", "agrees": True, "owner": "OOOXXX..."}]
    src = tmp_path / "l.jsonl"
    src.write_text("".join(json.dumps(d) + "\n" for d in lines))
    out = tmp_path / "l.npz"
    assert ownership_main(["pack", str(src), str(out)]) == 0
    packed = read_labels(out)
    assert sorted(packed) == ["a.sgf", "c.sgf"]
    assert all(packed[s]["owner"] == d["owner"] and packed[s]["agrees"]
               for d in lines for s in packed if d["source"] == s)
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    with pytest.raises(D.DataError, match="not a packed labels file"):
        read_labels(tmp_path / "bad.npz")
    assert ownership_main(["pack", str(tmp_path / "none.jsonl"), str(out)]) == 2
    # --cache: only the labels of a cache's games (a subset's, for the GPU)
    subset = types.SimpleNamespace(source=np.array([b"c.sgf", b"d.sgf"]), path="subset.npz")
    assert pack_labels(src, out, subset) == 1 and sorted(read_labels(out)) == ["c.sgf"]
    with pytest.raises(D.DataError, match="of a game in subset.npz"):
        pack_labels(src, out, types.SimpleNamespace(source=np.array([b"b.sgf"]),
                                                    path="subset.npz"))
    assert ownership_main(["pack", str(src), str(out), "--cache",
                           str(tmp_path / "missing.npz")]) == 2
