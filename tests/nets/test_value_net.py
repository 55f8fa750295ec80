"""The value network: game results in the cache, the three-headed res6v,
its training, its evaluator and bench.value."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from engine import sgf  # noqa: E402
from nets import data as D  # noqa: E402
from nets import train as T  # noqa: E402
from nets.checkpoint import load_checkpoint, save_checkpoint  # noqa: E402
from nets.models import build_model, komi_to_move  # noqa: E402
from nets_helpers import random_game  # noqa: E402

TINY_V = ["--model", "res6v", "--width", "8", "--blocks", "1", "--batch", "16",
          "--val-positions", "64", "--threads", "1", "--positions-per-game", "4"]


@pytest.mark.parametrize("text, parsed", [
    ("B+R", (1, D.HOW_RESIGN, 0.0)), ("W+Resign", (2, D.HOW_RESIGN, 0.0)),
    ("b+r", (1, D.HOW_RESIGN, 0.0)), ("W+T", (2, D.HOW_TIME, 0.0)),
    ("B+Time", (1, D.HOW_TIME, 0.0)), ("W+F", (2, D.HOW_FORFEIT, 0.0)),
    ("W+2.5", (2, D.HOW_COUNT, 2.5)), ("B+58.50", (1, D.HOW_COUNT, 58.5)),
    ("B+ 0.5", (1, D.HOW_COUNT, 0.5)), ("W+", (2, D.HOW_UNKNOWN, 0.0)),
    ("W+0", (2, D.HOW_UNKNOWN, 0.0)), ("0", (0, D.HOW_UNKNOWN, 0.0)),
    ("Draw", (0, D.HOW_UNKNOWN, 0.0)), ("Void", (0, D.HOW_UNKNOWN, 0.0)),
    ("?", (0, D.HOW_UNKNOWN, 0.0)), ("", (0, D.HOW_UNKNOWN, 0.0)),
    (None, (0, D.HOW_UNKNOWN, 0.0))])
def test_parse_result(text, parsed) -> None:
    assert D.parse_result(text) == parsed


#: (result, komi) of the games of the results cache, and whether each
#: teaches a value
GAMES = [("B+R", 6.5, True), ("W+3.5", 7.5, True), ("B+T", 6.5, False), ("W+F", 6.5, False),
         ("Draw", 6.5, False), ("B+R", 0.0, False), ("W+R", 0.5, True), ("B+12.5", 6.5, True)]


@pytest.fixture(scope="module")
def results_cache(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("results")
    for i, (result, komi, _) in enumerate(GAMES):
        text = sgf.dumps(19, komi, [], random_game(40 + i, 70), result=result)
        (root / f"g{i}.sgf").write_text(text)
    out = root / "cache.npz"
    D.build_cache(root, out, val_fraction=0.3, workers=1, log=None)
    return out


def test_the_cache_keeps_results(results_cache, tmp_path) -> None:
    cache = D.load_cache(results_cache)
    assert cache.summary["results"] == {"count": 2, "resign": 3, "time": 1, "forfeit": 1,
                                        "unknown": 1}
    order = np.argsort([int(s.decode()[1:-4]) for s in cache.source])
    assert [int(cache.winner[g]) for g in order] == [1, 2, 1, 2, 0, 1, 2, 1]
    assert [float(cache.margin[g]) for g in order] == [0, 3.5, 0, 0, 0, 0, 0, 12.5]
    assert [bool(cache.value_games()[g]) for g in order] == [t for _, _, t in GAMES]
    # a subset keeps them
    D.subset_cache(results_cache, tmp_path / "sub.npz", games=8)
    sub = D.load_cache(tmp_path / "sub.npz")
    assert sorted(sub.winner.tolist()) == sorted(cache.winner.tolist())
    # a cache of version 1 (before results) loads with no winner at all
    with np.load(results_cache) as z:
        old = {k: z[k] for k in z.files if k not in ("winner", "how", "margin")}
    old["version"] = np.array(1)
    np.savez(tmp_path / "v1.npz", **old)
    v1 = D.load_cache(tmp_path / "v1.npz")
    assert not v1.winner.any() and not v1.value_games().any()


def test_value_targets_follow_the_winner_and_the_colour(results_cache) -> None:
    cache = D.load_cache(results_cache)
    sampler = D.PositionSampler(cache, seed=3)
    x, y, col, where = sampler.batch(200, 0, info=True)
    v = sampler.value_targets(where["game"], col)
    g = where["game"]
    assert np.array_equal(v[:, 0], (cache.winner[g] == col + 1).astype(np.float32))
    assert np.array_equal(v[:, 1], cache.value_games()[g].astype(np.float32))
    assert np.array_equal(v[:, 2], cache.komi[g])
    assert 0 < v[:, 1].mean() < 1


def test_count_lead_and_value_targets_at_other_komi(results_cache) -> None:
    """--komi-spread: about half of the positions of counted games get the
    game's komi plus a whole number of points up to the spread, and the
    result the count gives under that komi; everything else is as before,
    validation (no step) included, and the draw is a function of the step."""
    cache = D.load_cache(results_cache)
    order = np.argsort([int(s.decode()[1:-4]) for s in cache.source])
    lead = cache.count_lead()
    # W+3.5 at komi 7.5: Black 4 points ahead on the board; B+12.5 at 6.5: 19
    assert [float(lead[g]) for g in order][1::6] == [4.0, 19.0]
    assert np.isnan(lead[order[[0, 2, 3, 4, 5, 6]]]).all()
    sampler = D.PositionSampler(cache, seed=3, komi_spread=12)
    x, y, col, where = sampler.batch(400, 5, info=True)
    g = where["game"]
    plain = sampler.value_targets(g, col)
    assert np.array_equal(plain, D.PositionSampler(cache, seed=3).value_targets(g, col))
    v = sampler.value_targets(g, col, 5)
    assert np.array_equal(v, sampler.value_targets(g, col, 5))
    assert not np.array_equal(v[:, 2], sampler.value_targets(g, col, 6)[:, 2])
    counted = np.isfinite(lead[g])
    d = v[:, 2] - cache.komi[g]
    assert not d[~counted].any() and np.array_equal(v[~counted], plain[~counted])
    assert 0.3 < (d[counted] != 0).mean() < 0.7
    assert (np.abs(d) <= 12).all() and np.array_equal(d, np.round(d))
    black_wins = lead[g] > v[:, 2]
    assert np.array_equal(v[counted, 0], np.where(col == 0, black_wins, ~black_wins)[counted])
    assert np.array_equal(v[:, 1], plain[:, 1])
    # the game Black lost by 3.5 at komi 7.5, Black wins at komi 3.5 or less
    lost = counted & (lead[g] == 4.0) & (v[:, 2] <= 3.5)
    assert lost.any() and np.array_equal(v[lost, 0], (col[lost] == 0).astype(np.float32))


def _write_leads(path: Path, lines: list[dict]) -> Path:
    path.write_text("".join(json.dumps(d) + "\n" for d in lines))
    return path


def test_resigned_games_learn_other_komi_from_their_estimated_leads(results_cache,
                                                                     tmp_path) -> None:
    """--leads: a resigned value game with an agreeing estimated lead has
    its positions moved to other komi as a counted game's are, with the
    result that lead gives; the draws of the other games do not change.
    Lines that disagree, contradict the record, name a game that is not a
    resigned value game or is not in the cache are counted and left out."""
    cache = D.load_cache(results_cache)
    index = {s.decode(): g for g, s in enumerate(cache.source)}
    leads_file = _write_leads(tmp_path / "leads.jsonl", [
        {"source": "g0.sgf", "agrees": True, "lead": 10.0},     # B+R at komi 6.5: used
        {"source": "g6.sgf", "agrees": True, "lead": 3.0},      # W+R at 0.5: Black ahead?
        {"source": "g5.sgf", "agrees": True, "lead": 10.0},     # komi 0: no value game
        {"source": "g1.sgf", "agrees": True, "lead": -20.0},    # counted: the record knows
        {"source": "gx.sgf", "agrees": True, "lead": 1.0},
        {"source": "g2.sgf", "agrees": False}])
    leads, counts = D.load_leads(leads_file, cache)
    assert counts == {"lines": 6, "used": 1, "disagree": 1, "not_in_cache": 1,
                      "not_resigned": 3}
    g0 = index["g0.sgf"]
    assert leads[g0] == 10.0 and np.isnan(np.delete(leads, g0)).all()
    lead = cache.with_leads(leads)
    assert lead[g0] == 10.0 and np.array_equal(np.delete(lead, g0),
                                               np.delete(cache.count_lead(), g0),
                                               equal_nan=True)
    sampler = D.PositionSampler(cache, seed=3, komi_spread=12, leads=leads)
    x, y, col, where = sampler.batch(400, 5, info=True)
    g = where["game"]
    v = sampler.value_targets(g, col, 5)
    before = D.PositionSampler(cache, seed=3, komi_spread=12).value_targets(g, col, 5)
    mine = g == g0
    assert mine.any() and np.array_equal(v[~mine], before[~mine])
    d = v[mine, 2] - 6.5
    assert 0.3 < (d != 0).mean() < 0.7 and (np.abs(d) <= 12).all()
    black_wins = 10.0 > v[mine, 2]
    assert (~black_wins).any()          # komi above 10: Black, who won, loses
    assert np.array_equal(v[mine, 0], np.where(col[mine] == 0, black_wins, ~black_wins))
    assert np.array_equal(sampler.value_targets(g, col), D.PositionSampler(
        cache, seed=3).value_targets(g, col))      # validation keeps the real komi
    owners = _write_leads(tmp_path / "owners.jsonl", [{"source": "g0.sgf", "agrees": True,
                                                       "owner": "X" * 361}])
    with pytest.raises(D.DataError, match="owners.jsonl line 1 is not a lead line"):
        D.load_leads(owners, cache)
    none = _write_leads(tmp_path / "none.jsonl", [{"source": "g2.sgf", "agrees": False}])
    with pytest.raises(D.DataError, match="no resigned game of the cache"):
        D.load_leads(none, cache)


def test_res6v_heads() -> None:
    torch.manual_seed(0)
    net = build_model("res6v", width=8, blocks=1).eval()
    x = torch.rand(5, 38, 19, 19)
    c = torch.tensor([0, 1, 0, 1, 1])
    policy, value, own = net(x, c, torch.tensor([7.5, 7.5, 0.5, -3.0, 6.5]))
    assert policy.shape == (5, 361) and value.shape == (5,) and own.shape == (5, 361)
    # two-argument calls are a policy net's; the policy head is the same
    assert torch.allclose(net(x, c), policy)
    # a scalar komi is every position's
    assert torch.allclose(net(x, c, 7.5)[1][:2], value[:2])
    # the search's pass: the same policy and value, no ownership head
    komi = torch.tensor([7.5, 7.5, 0.5, -3.0, 6.5])
    assert all(torch.equal(a, b) for a, b in zip(net.policy_value(x, c, komi), (policy, value)))
    # a trainer's rows of labelled games: their ownership alone, or none
    some = net(x, c, komi, own_rows=torch.tensor([3, 1]))
    assert torch.allclose(some[2], own[[3, 1]], atol=1e-6)
    assert all(torch.equal(a, b) for a, b in zip(some[:2], (policy, value)))
    assert net(x, c, komi, own_rows=torch.zeros(0, dtype=torch.long))[2] is None
    # folded batch norms give the same function
    fast = net.for_inference()
    for a, b in zip(fast(x, c, 6.5), net(x, c, 6.5)):
        assert torch.allclose(a, b, atol=1e-4)
    # works on smaller boards (pooling, not a board-sized layer)
    assert net(torch.rand(2, 38, 9, 9), 0, 7.5)[1].shape == (2,)
    assert komi_to_move(torch.tensor([7.5, 7.5]), torch.tensor([0, 1])).tolist() == [-7.5, 7.5]


@pytest.mark.parametrize("layout", ["contiguous", "channels_last"])
@pytest.mark.parametrize("labelled", [[1, 4], []])
def test_a_training_step_runs_the_ownership_head_on_labelled_rows_only(labelled, layout) -> None:
    """The loss and every gradient are the whole batch's: rows of weight 0
    add nothing, and with no labelled row the head still gets its (zero)
    gradient, as it did when it ran on every row.  The trunk's gradient
    keeps the activations' layout: a channels-last step stays channels-last
    through the backward pass."""
    from contextlib import nullcontext
    from nets.ownership import masked_loss
    memory_format = getattr(torch, layout + ("_format" if layout == "contiguous" else ""))
    x = (torch.rand(6, 38, 9, 9) < 0.3).to(torch.uint8)
    y = torch.randint(0, 81, (6,))
    c = torch.tensor([0, 1, 0, 1, 1, 0])
    v = torch.tensor([[1.0, 1.0, 7.5]] * 3 + [[0.0, 1.0, 6.5]] * 3)
    weight = torch.zeros(6)
    weight[labelled] = 1.0
    own = (torch.rand(6, 81), weight)

    def loss_fn(out, y, x, v, own=None):
        return T.policy_value_loss(out, y, v, 1.0, own)

    grads = []
    for step in ("train_step", "whole batch"):
        torch.manual_seed(0)
        net = build_model("res6v", width=8, blocks=1).to(memory_format=memory_format)
        trunk, layouts = net.trunk, []

        def hooked(planes, trunk=trunk, layouts=layouts):
            f = trunk(planes)
            f.register_hook(lambda g: layouts.append(
                g.is_contiguous(memory_format=memory_format)))
            return f
        net.trunk = hooked
        opt = torch.optim.SGD(net.parameters(), lr=0.0)
        if step == "train_step":
            loss = T.train_step(net, opt, x, y, c, "cpu", nullcontext, loss_fn, v=v, own=own,
                                memory_format=memory_format)
            assert layouts == [True]
        else:
            out = net(x.float().contiguous(memory_format=memory_format), c, v[:, 2])
            loss = loss_fn(out, y, x, v) + masked_loss(out[2], *own)
            loss.backward()
        grads.append((float(loss.detach()), {k: p.grad for k, p in net.named_parameters()}))
    (loss_a, a), (loss_b, b) = grads
    assert loss_a == pytest.approx(loss_b, rel=1e-6)
    assert a.keys() == b.keys() and a["own_head.weight"] is not None
    for k in a:
        assert torch.allclose(a[k], b[k], atol=1e-6), k


def test_a_score_head_moves_with_komi_as_a_count_does() -> None:
    """res6vs: the value is a logistic of the mover's lead on the board plus
    its komi, over the lead's spread.  The komi at which a position is even
    is minus the lead (for Black and White alike), and any komi shifts the
    logit by komi / spread."""
    torch.manual_seed(0)
    net = build_model("res6vs", width=8, blocks=1)
    with torch.no_grad():       # a lead and a spread far from the start's
        net.value_out.bias.copy_(torch.tensor([0.45, 0.2]))
    net.eval()
    x = torch.rand(3, 38, 19, 19).expand(2, 3, 38, 19, 19).reshape(6, 38, 19, 19)
    c = torch.tensor([0, 0, 0, 1, 1, 1])
    lead, spread = net.lead_spread(net.trunk(x))
    assert torch.all(spread >= 0.5)
    # even at the komi that cancels the lead: komi_to_move = -lead
    even = torch.where(c == 1, -lead, lead)
    assert torch.allclose(net(x, c, even)[1], torch.zeros(6), atol=1e-4)
    for komi in (-20.0, 0.5, 7.5, 63.5):
        logit = net(x, c, komi)[1]
        assert torch.allclose(logit, (lead + komi_to_move(torch.full((6,), komi), c)) / spread,
                              atol=1e-4)
    # ten points more for White: the logit moves by 10 / spread
    assert torch.allclose(net(x, c, 17.5)[1] - net(x, c, 7.5)[1],
                          torch.where(c == 1, 10.0, -10.0) / spread, atol=1e-4)
    fast = net.for_inference()
    assert torch.allclose(fast(x, c, 6.5)[1], net(x, c, 6.5)[1], atol=1e-4)
    assert torch.equal(net.policy_value(x, c, 6.5)[1], net(x, c, 6.5)[1])
    with pytest.raises(ValueError, match="value_head must be"):
        build_model("res6v", value_head="linear")


def test_init_from_a_policy_net_keeps_its_policy(tmp_path) -> None:
    torch.manual_seed(1)
    res = build_model("res6", width=8, blocks=1)
    for p in res.parameters():
        p.data.normal_()
    src = tmp_path / "res.pt"
    save_checkpoint(src, res, metadata={})
    net = build_model("res6v", width=8, blocks=1)
    T.init_from(net, str(src), verbose=False)
    x, c = torch.rand(3, 38, 19, 19), torch.tensor([0, 1, 0])
    assert torch.allclose(net.eval()(x, c), res.eval()(x, c), atol=1e-5)


def test_a_deeper_net_grown_from_res6v_starts_as_its_function() -> None:
    """res10v from the shipped res6v (nets.train --init-from): the four new
    blocks start as the identity, so the three heads give res6v's answers,
    in training mode as well (the new blocks' batch norms then normalise
    by the batch, and still add nothing)."""
    from nets.evaluator import DEFAULT_WEIGHTS
    assert DEFAULT_WEIGHTS.name == "res6v.pt"
    src = load_checkpoint(DEFAULT_WEIGHTS)
    res6v = build_model("res6v")
    res6v.load_state_dict(src.weights)
    deep = build_model("res10v")
    assert len(deep.blocks) == 10
    T.init_from(deep, str(DEFAULT_WEIGHTS), verbose=False)
    torch.manual_seed(2)
    x = (torch.rand(4, 38, 19, 19) < 0.3).float()
    c, komi = torch.tensor([0, 1, 0, 1]), torch.tensor([7.5, 7.5, 0.5, 6.5])
    for mode in ("eval", "train"):
        getattr(res6v, mode)()
        getattr(deep, mode)()
        with torch.no_grad():
            for a, b in zip(deep(x, c, komi), res6v(x, c, komi)):
                assert torch.allclose(a, b, atol=1e-4), mode


def test_new_blocks_can_start_at_a_small_scale(capsys) -> None:
    """--new-block-scale: the blocks res6v lacks start with their last batch
    norm at that scale, so their convolutions get a gradient at once; every
    tensor res6v has is still res6v's."""
    from nets.evaluator import DEFAULT_WEIGHTS
    src = load_checkpoint(DEFAULT_WEIGHTS).weights
    deep = build_model("res10v")
    T.init_from(deep, str(DEFAULT_WEIGHTS), verbose=True, new_block_scale=0.05)
    assert "new blocks' last batch-norm scale 0.05" in capsys.readouterr().err
    own = deep.state_dict()
    assert all(torch.equal(own[k], v) for k, v in src.items() if k in own)
    for i in range(6, 10):
        assert torch.all(own[f"blocks.{i}.bn2.weight"] == 0.05)
        assert torch.all(own[f"blocks.{i}.bn1.weight"] == 1)
    deep.train()
    x = (torch.rand(8, 38, 19, 19) < 0.3).float()
    c, komi = torch.tensor([0, 1] * 4), torch.full((8,), 7.5)
    deep(x, c, komi)[0].logsumexp(dim=1).sum().backward()
    assert deep.blocks[9].conv1.weight.grad.abs().sum() > 0


def test_new_blocks_learn_at_their_own_rate(results_cache, tmp_path, capsys) -> None:
    """--new-block-lr-scale: a net grown by --init-from gives its new blocks
    a learning rate of their own, which a resumed run keeps; the old
    blocks and the heads learn at the common rate."""
    common = ["--data", str(results_cache), "--eval-every", "2", "--optimizer", "adam",
              "--lr", "0.001", "--halve-at", "none", "--seed", "5", *TINY_V]
    small = tmp_path / "small"
    assert T.main([*common, "--out", str(small), "--steps", "2"]) == 0
    grown = tmp_path / "grown"
    args = [*common, "--blocks", "3", "--out", str(grown), "--steps", "2",
            "--init-from", str(small / "last.pt"), "--new-block-scale", "0.05",
            "--new-block-lr-scale", "10"]
    assert T.main(args) == 0
    err = capsys.readouterr().err
    assert "new blocks' last batch-norm scale 0.05" in err
    assert "adam lr 0.001 (new blocks 1, 2 x10)" in err
    state = load_checkpoint(grown / "last.pt").metadata["train_state"]
    assert state["new_blocks"] == [1, 2] and state["new_block_lr_scale"] == 10
    assert T.main([*common, "--blocks", "3", "--out", str(grown), "--steps", "4",
                   "--resume"]) == 0
    assert "(new blocks 1, 2 x10)" in capsys.readouterr().err
    assert load_checkpoint(grown / "last.pt").metadata["train_state"]["new_blocks"] == [1, 2]
    net = build_model("res6v", width=8, blocks=3)
    groups = T.param_groups(net, 3.0, [1, 2], 10.0)
    assert [g["lr_scale"] for g in groups] == [1.0, 3.0, 10.0]
    names = {id(p): n for n, p in net.named_parameters()}
    assert all(names[id(p)].startswith(("blocks.1.", "blocks.2."))
               for p in groups[2]["params"])
    assert sum(len(g["params"]) for g in groups) == len(list(net.parameters()))
    assert len(T.param_groups(net, 1.0, [1, 2], 1.0)) == 1


def test_new_block_lr_scale_needs_new_blocks(results_cache, tmp_path, capsys) -> None:
    base = ["--data", str(results_cache), "--steps", "1", *TINY_V]
    assert T.main([*base, "--out", str(tmp_path / "a"), "--new-block-lr-scale", "5"]) == 2
    assert "--new-block-lr-scale needs --init-from" in capsys.readouterr().err
    assert T.main([*base, "--out", str(tmp_path / "b")]) == 0
    assert T.main([*base, "--out", str(tmp_path / "c"), "--init-from",
                   str(tmp_path / "b" / "last.pt"), "--new-block-lr-scale", "5"]) == 2
    assert "this run has no new residual blocks" in capsys.readouterr().err


def test_a_short_value_run(results_cache, tmp_path, capsys) -> None:
    out = tmp_path / "run"
    rc = T.main(["--data", str(results_cache), "--out", str(out), "--steps", "20",
                 "--eval-every", "10", "--optimizer", "adam", "--lr", "0.003",
                 "--head-lr-scale", "3", "--halve-at", "none", "--seed", "5", *TINY_V])
    assert rc == 0
    ck = load_checkpoint(out / "last.pt")
    assert ck.metadata["train_state"]["head_lr_scale"] == 3.0
    assert ck.metadata["train_state"]["value_weight"] == 1.0
    rows = [__import__("json").loads(line) for line in (out / "metrics.jsonl").read_text()
            .splitlines()]
    assert all(0 <= r["value_acc"] <= 1 and np.isfinite(r["value_loss"]) for r in rows)
    # the value heads learn at three times the trunk's rate
    opt = ck.optimizer
    assert sorted(g["lr"] for g in opt["param_groups"]) == pytest.approx([0.003, 0.009])
    # resumed, it keeps both, and its seed
    assert T.main(["--data", str(results_cache), "--out", str(out), "--steps", "25",
                   "--resume", "--threads", "1"]) == 0
    ck = load_checkpoint(out / "last.pt")
    assert ck.metadata["train_state"]["head_lr_scale"] == 3.0 and ck.metadata["steps"] == 25
    assert ck.metadata["train_state"]["seed"] == 5
    # told another rate for the heads, it learns at that one
    assert T.main(["--data", str(results_cache), "--out", str(out), "--steps", "26",
                   "--resume", "--threads", "1", "--head-lr-scale", "6"]) == 0
    ck = load_checkpoint(out / "last.pt")
    assert sorted(g["lr"] for g in ck.optimizer["param_groups"]) == pytest.approx([0.003, 0.018])
    assert ck.metadata["train_state"]["head_lr_scale"] == 6.0


def test_a_value_run_with_a_komi_spread(results_cache, tmp_path, capsys) -> None:
    out = tmp_path / "run"
    base = ["--data", str(results_cache), "--out", str(out), *TINY_V]
    assert T.main([*base, "--steps", "3", "--komi-spread", "10"]) == 0
    assert "counted games' komi spread by up to 10 points" in capsys.readouterr().err
    assert load_checkpoint(out / "last.pt").metadata["train_state"]["komi_spread"] == 10
    assert T.main([*base, "--steps", "4", "--resume"]) == 0
    assert "komi spread by up to 10 points" in capsys.readouterr().err
    assert load_checkpoint(out / "last.pt").metadata["train_state"]["komi_spread"] == 10
    assert T.main([*base, "--steps", "1", "--komi-spread", "101"]) == 2
    assert "--komi-spread must be 0..100 points, got 101" in capsys.readouterr().err
    policy = ["res6" if a == "res6v" else a for a in TINY_V]
    assert T.main(["--data", str(results_cache), "--out", str(tmp_path / "p"), "--steps", "1",
                   *policy, "--komi-spread", "10"]) == 2
    assert "--komi-spread is for value models" in capsys.readouterr().err


def test_a_value_run_with_leads_for_resigned_games(results_cache, tmp_path, capsys) -> None:
    out = tmp_path / "run"
    leads = str(_write_leads(tmp_path / "leads.jsonl",
                             [{"source": "g0.sgf", "agrees": True, "lead": 10.0}]))
    base = ["--data", str(results_cache), "--out", str(out), *TINY_V]
    assert T.main([*base, "--steps", "1", "--leads", leads]) == 2
    assert "--leads is for --komi-spread" in capsys.readouterr().err
    assert T.main([*base, "--steps", "2", "--komi-spread", "10", "--leads", leads]) == 0
    assert f"(and 1 resigned games' by their leads in {leads})" in capsys.readouterr().err
    meta = load_checkpoint(out / "last.pt").metadata
    assert meta["train_state"]["leads"] == leads and meta["data"]["leads"]["used"] == 1
    assert T.main([*base, "--steps", "3", "--resume"]) == 0
    assert "by their leads in" in capsys.readouterr().err
    assert load_checkpoint(out / "last.pt").metadata["train_state"]["leads"] == leads


def test_a_value_run_learns_ownership_from_labels(results_cache, tmp_path, capsys) -> None:
    """--labels: the ownership head learns the labelled games' final owners
    (here the whole board Black's, which the symmetries leave as it is)
    beside the policy and the value; the unlabelled game teaches it nothing."""
    cache = D.load_cache(results_cache)
    labels = tmp_path / "labels.jsonl"
    owner = "X" * 361
    lines = [{"source": s.decode(), "agrees": True, "owner": owner}
             for s in cache.source if s.decode() != "g1.sgf"]
    labels.write_text("".join(__import__("json").dumps(d) + "\n" for d in lines))
    out = tmp_path / "run"
    rc = T.main(["--data", str(results_cache), "--out", str(out), "--steps", "30",
                 "--eval-every", "15", "--optimizer", "adam", "--lr", "0.01",
                 "--halve-at", "none", "--labels", str(labels), "--ownership-weight", "2",
                 *TINY_V])
    assert rc == 0
    assert "7 games used" in capsys.readouterr().err
    rows = [__import__("json").loads(line) for line in (out / "metrics.jsonl").read_text()
            .splitlines()]
    assert all(0 <= r["own_acc"] <= 1 and r["own_positions"] > 0 for r in rows)
    assert rows[-1]["own_loss"] < rows[0]["own_loss"] - 0.05
    ck = load_checkpoint(out / "last.pt")
    assert ck.metadata["train_state"]["ownership_weight"] == 2.0
    assert ck.metadata["data"]["labels"]["used"] == 7
    # resumed without --labels, it learns from the same labels; with them gone, it warns
    assert T.main(["--data", str(results_cache), "--out", str(out), "--steps", "32",
                   "--resume", "--threads", "1"]) == 0
    assert "7 games used" in capsys.readouterr().err
    assert "own_acc" in [__import__("json").loads(line) for line in
                         (out / "metrics.jsonl").read_text().splitlines()][-1]
    labels.rename(tmp_path / "gone.jsonl")
    assert T.main(["--data", str(results_cache), "--out", str(out), "--steps", "33",
                   "--resume", "--threads", "1"]) == 0
    assert "are missing: no ownership is learnt" in capsys.readouterr().err
    labels.write_text((tmp_path / "gone.jsonl").read_text())
    x = torch.zeros(2, 38, 19, 19)
    x[:, 37] = 1        # on the board
    _, _, own = ck.build_model()(x, torch.tensor([0, 1]), 7.5)
    mine = torch.sigmoid(own)               # the player to move's points: all Black's
    assert mine[0].mean() > 0.5 > mine[1].mean()
    assert T.main(["--data", str(results_cache), "--out", str(tmp_path / "p"), "--steps", "1",
                   "--labels", str(labels), "--model", "small6"]) == 2
    assert "for ownership and value models" in capsys.readouterr().err


def test_a_cache_without_results_cannot_train_a_value_net(results_cache, tmp_path,
                                                          capsys) -> None:
    with np.load(results_cache) as z:
        old = {k: z[k] for k in z.files if k not in ("winner", "how", "margin")}
    old["version"] = np.array(1)
    np.savez(tmp_path / "v1.npz", **old)
    rc = T.main(["--data", str(tmp_path / "v1.npz"), "--out", str(tmp_path / "r"),
                 "--steps", "2", *TINY_V])
    assert rc == 2
    assert "no game results" in capsys.readouterr().err


def test_evaluator_and_bench_value(results_cache, tmp_path, capsys) -> None:
    from bench import value as V
    from nets.evaluator import PolicyEvaluator

    torch.manual_seed(2)
    net = build_model("res6v", width=8, blocks=1)
    path = tmp_path / "v.pt"
    save_checkpoint(path, net, metadata={"model": "res6v"})
    ev = PolicyEvaluator(path, "cpu", 1, "fp32")
    assert ev.has_value
    x = np.zeros((2, 38, 19, 19), np.uint8)
    x[:, 13] = 1                    # every point legal
    probs, values = ev.evaluate_value(x, np.array([1, 2]), 7.5)
    assert probs.shape == (2, 361) and np.allclose(probs.sum(1), 1, atol=1e-5)
    assert values.shape == (2,) and ((values > 0) & (values < 1)).all()
    assert np.allclose(probs, ev.evaluate(x, np.array([1, 2])), atol=1e-6)

    rc = V.main([str(path), str(results_cache), "--positions", "40",
                 "--rollout-positions", "1", "--rollouts", "30"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "| 0-49 |" in out
    assert out.count("\n| ") == 5      # header and four phases
    assert "(sign test p)" in out and "(p = " in out
    assert V.main([str(path), str(results_cache), "--positions", "40",
                   "--rollout-positions", "0", "--phases", "150+,50-99"]) == 0
    rows = [line.split(" | ")[0] for line in capsys.readouterr().out.splitlines()[3:]]
    assert rows == ["| 50-99", "| 150+"]
    with pytest.raises(SystemExit) as exit_:
        V.main([str(path), str(results_cache), "--phases", "150"])
    assert exit_.value.code == 2 and "--phases takes names among" in capsys.readouterr().err
    # how well it reads komi: the counted games' positions at other komi
    assert V.main([str(path), str(results_cache), "--positions", "40",
                   "--rollout-positions", "0", "--komi-shifts=-10,0,10"]) == 0
    out = capsys.readouterr().out
    shifts = out.split("counted games at another komi:")[1].splitlines()[3:]
    assert [row.split(" | ")[0] for row in shifts] == ["| -10", "| +0", "| +10"]
    with pytest.raises(SystemExit) as exit_:
        V.main([str(path), str(results_cache), "--komi-shifts", "ten"])
    assert exit_.value.code == 2 and "--komi-shifts takes numbers" in capsys.readouterr().err

    # its ownership head serves as the engine's ownership network (--ownership)
    from nets.evaluator import OwnershipEvaluator
    own = OwnershipEvaluator(path, "cpu", 1, "fp32").evaluate(x, np.array([1, 2]))
    with torch.no_grad():
        _, _, logits = net.eval()(torch.from_numpy(x).float(), torch.tensor([0, 1]), 7.5)
    assert np.allclose(own, torch.sigmoid(logits).numpy(), atol=1e-5)

    res = build_model("res6", width=8, blocks=1)
    plain = tmp_path / "p.pt"
    save_checkpoint(plain, res, metadata={"model": "res6"})
    assert not PolicyEvaluator(plain, "cpu", 1, "fp32").has_value
    assert V.main([str(plain), str(results_cache)]) == 2
    assert "has no value head" in capsys.readouterr().err


def test_the_sign_test_of_paired_judgements() -> None:
    from bench.stats import sign_test
    from bench.value import paired
    assert sign_test(0, 0) == sign_test(5, 5) == 1.0
    assert sign_test(0, 10) == sign_test(10, 0) == 2 / 1024
    assert sign_test(60, 40) == pytest.approx(0.0569, abs=1e-4)     # McNemar's exact test
    won = np.array([1, 1, 0, 0, 1], np.float32)
    net = np.array([0.9, 0.8, 0.7, 0.2, 0.4], np.float32)   # right, right, wrong, right, wrong
    rollouts = np.array([0.4, 0.6, 0.3, 0.6, 0.3], np.float32)  # wrong, right, right, wrong, wrong
    assert paired(net, rollouts, won) == {"network_only": 2, "rollouts_only": 1, "p": 1.0}


def test_a_run_that_trains_the_value_head_alone(results_cache, tmp_path, capsys) -> None:
    """--train-only value: the value head learns, and every other tensor,
    the batch norms' running statistics included, stays the starting net's,
    so its policy and ownership outputs are unchanged; the choice is kept
    on --resume and refused for a net without a value head."""
    start = tmp_path / "start"
    base = ["--data", str(results_cache), *TINY_V, "--optimizer", "adam", "--lr", "0.01"]
    assert T.main([*base, "--out", str(start), "--steps", "2"]) == 0
    out = tmp_path / "run"
    assert T.main([*base, "--out", str(out), "--steps", "3", "--init-from",
                   str(start / "last.pt"), "--train-only", "value", "--komi-spread", "10"]) == 0
    assert "the value head alone learning" in capsys.readouterr().err
    assert T.main([*base, "--out", str(out), "--steps", "5", "--resume"]) == 0
    assert "the value head alone learning" in capsys.readouterr().err
    before = load_checkpoint(start / "last.pt").weights
    ck = load_checkpoint(out / "last.pt")
    assert ck.metadata["train_state"]["train_only"] == "value"
    assert ck.metadata["train_state"]["step"] == 5
    changed = {k for k, v in ck.weights.items()
               if v.is_floating_point() and not torch.equal(v, before[k])}
    assert changed and all(k.startswith("value_") for k in changed)
    assert "value_fc.weight" in changed
    policy = ["res6" if a == "res6v" else a for a in TINY_V]
    assert T.main(["--data", str(results_cache), "--out", str(tmp_path / "p"), "--steps", "1",
                   *policy, "--train-only", "value"]) == 2
    assert "--train-only value is for value models" in capsys.readouterr().err
