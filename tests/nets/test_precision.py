"""bf16 or float32 (nets/precision.py): the choice by the CPU's flags, and
bf16 keeping the network's opinion: on 2,000 positions the shipped net picks
the same top move in bf16 as in float32 at least 99% of the time, and its
accuracy moves by at most 0.3 points (the README has the figures on
test19).  A CPU without bf16 instructions emulates it some 20 times slower
than float32 (and "auto" never picks it there): it checks 200 positions,
and the emulation's kernels round apart a little more (below)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from engine.board import PASS, Board
from engine.features import LEGAL, N_PLANES, planes
from nets.evaluator import DEFAULT_WEIGHTS, PolicyEvaluator
from nets.precision import cpu_flags, resolve

CPU = torch.device("cpu")
#: whether this CPU runs bf16 in hardware (AMX or AVX-512 BF16), not emulated
NATIVE_BF16 = resolve("auto", CPU)[0] == "bf16"


def test_auto_follows_the_cpu_flags(tmp_path) -> None:
    assert resolve("auto", CPU, {"avx2", "amx_bf16", "amx_tile"})[0] == "bf16"
    assert resolve("auto", CPU, {"avx512f", "avx512_bf16"}) == \
        ("bf16", "the CPU has avx512_bf16")
    precision, why = resolve("auto", CPU, {"avx2", "fma"})
    assert precision == "fp32" and "no bf16" in why
    assert resolve("fp32", CPU, {"amx_bf16"}) == ("fp32", "asked for")
    assert resolve("bf16", CPU, set()) == ("bf16", "asked for")
    with pytest.raises(ValueError, match="fp16"):
        resolve("fp16", CPU)
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nflags\t\t: fpu avx512_bf16 sse\n\nprocessor\t: 1\n")
    assert cpu_flags(info) == {"fpu", "avx512_bf16", "sse"}
    assert cpu_flags(tmp_path / "missing") == set()


def test_the_output_layer_stays_float32_under_bf16() -> None:
    """The logits come out of a float32 layer whatever the trunk ran in:
    bf16 would round two logits near 10 to steps of 0.06."""
    from nets.models import build_model
    for name, first in (("small6", lambda net: net.trunk[0]), ("res6", lambda net: net.stem)):
        net = build_model(name).for_inference()
        x = torch.rand(2, net.config["in_planes"], 9, 9)
        with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16):
            assert first(net)(x).dtype == torch.bfloat16
            assert net(x, 0).dtype == torch.float32


def _self_play_positions(ev: PolicyEvaluator, games: int = 20, moves: int = 100, seed: int = 1):
    """Positions of ``games`` 19x19 games the net plays against itself,
    moves drawn from its float32 probabilities: (planes, colours, moves)."""
    rng = np.random.default_rng(seed)
    boards = [Board(19) for _ in range(games)]
    history: list[list[int]] = [[] for _ in range(games)]
    xs, cs, ys = [], [], []
    for _ in range(moves):
        x = np.stack([planes(b, h[:4], rank=9, dtype=np.uint8) for b, h in zip(boards, history)])
        c = np.array([b.to_move for b in boards])
        probs = ev.evaluate(x, c)
        for k, b in enumerate(boards):
            p = probs[k].astype(np.float64)
            if p.sum() <= 0:
                move = PASS
            else:
                i = int(rng.choice(len(p), p=p / p.sum()))
                move = b.point(i % 19, 18 - i // 19)
                xs.append(x[k])
                cs.append(c[k])
                ys.append(i)
            b.play(move)
            history[k].insert(0, move)
    return np.stack(xs), np.array(cs), np.array(ys)


def test_bf16_keeps_the_networks_choices() -> None:
    """Over the positions of the network's own games, bf16 picks fp32's
    best move in 98% or more of the distinct positions, any other pick is a
    near tie (fp32 rates it within 12% of its best: res6v step 72,438 rates two
    opening points 0.141 and 0.136 on the empty board, where bf16 swaps
    them; on an AMD EPYC with AVX-512 BF16, 2026-11-28, step 99,853 swapped
    18 of 2,000, the widest apart 0.452 and 0.430, 5.0%, where bf16 moved
    probabilities by up to 0.019; on an Intel Xeon with AMX, 2026-12-07,
    the mean of step 153,209 and two runs from it swapped 23 of 1,966
    distinct positions, 98.8%, the widest apart 0.165 and 0.150, 9.4%, where
    bf16 moved probabilities by up to 0.024, and named the move played 1,011
    times against fp32's 1,012 of 2,000), and both name the move played
    equally often.  On an emulating CPU's 200 positions one near tie is half
    a per cent: 98% there (an AVX2 EPYC, 2026-11-26: 197 of 199, the two others
    within 0.006 of fp32's best)."""
    games = 20 if NATIVE_BF16 else 2
    ev = PolicyEvaluator(DEFAULT_WEIGHTS, device="cpu", threads=1, precision="fp32")
    x, c, played = _self_play_positions(ev, games=games)
    assert len(played) == 100 * games
    probs, best = {}, {}
    for precision in ("fp32", "bf16"):
        ev.precision = precision
        probs[precision] = np.concatenate([ev.evaluate(x[a:a + 250], c[a:a + 250])
                                           for a in range(0, len(x), 250)])
        best[precision] = probs[precision].argmax(1)
    # every game starts from the empty board: count each position (and
    # player to move) once
    key = np.concatenate([x.reshape(len(x), -1), c.reshape(-1, 1).astype(x.dtype)], axis=1)
    _, first = np.unique(key, axis=0, return_index=True)
    same = float((best["fp32"][first] == best["bf16"][first]).mean())
    assert same >= 0.98, same
    # where bf16 picks another move, fp32 all but ties it with its own best
    rows = np.flatnonzero(best["fp32"] != best["bf16"])
    f = probs["fp32"]
    top = f[rows, best["fp32"][rows]]
    gap = (top - f[rows, best["bf16"][rows]]) / top
    assert (gap < 0.12).all(), gap
    # counted in positions, not shares: 0.495 - 0.49 exceeds 1/200 in floats
    hits = {p: int((b == played).sum()) for p, b in best.items()}
    assert abs(hits["fp32"] - hits["bf16"]) <= max(0.003 * len(played), 1), hits


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_channels_last_gives_the_contiguous_answers(precision) -> None:
    """The evaluator keeps its activations channels-last on a CPU (1.1-1.9x
    faster there); the probabilities and values are those of the contiguous
    layout, to float32 rounding in float32.  In bf16 the two layouts'
    kernels may round apart by bf16's own precision: up to 6e-4 where bf16
    is emulated (an AVX2 EPYC, 2026-11-26, where "auto" takes float32) and
    8e-4 on an AMD EPYC with AVX-512 BF16 (2026-11-28); the same best
    moves."""
    rng = np.random.default_rng(3)
    board, xs, colors = Board(19), [], []
    for k in range(1, 121):                 # a position every 10 random moves
        moves = board.legal_moves()
        board.play(moves[rng.integers(len(moves))] if moves else PASS)
        if k % 10 == 0:
            xs.append(planes(board, dtype=np.uint8))
            colors.append(board.to_move)
    x, c = np.stack(xs), np.array(colors)
    fast = PolicyEvaluator(device="cpu", threads=1, precision=precision)
    plain = PolicyEvaluator(device="cpu", threads=1, precision=precision,
                            memory_format="contiguous")
    assert fast.memory_format == torch.channels_last
    assert plain.memory_format == torch.contiguous_format
    (p1, v1), (p2, v2) = fast.evaluate_value(x, c, 7.5), plain.evaluate_value(x, c, 7.5)
    tol = 1e-4 if precision == "fp32" else 2e-3
    assert np.abs(p1 - p2).max() < tol and np.abs(v1 - v2).max() < tol
    assert (p1.argmax(axis=1) == p2.argmax(axis=1)).all()
    with pytest.raises(ValueError, match="sideways"):
        PolicyEvaluator(device="cpu", memory_format="sideways")


WEIGHTS = DEFAULT_WEIGHTS.parent


@pytest.mark.parametrize("name", ["res6v", "res6", "maddison12", "small6", "clark8", "dann6",
                                  "res9"])
def test_the_traced_forward_pass_gives_the_eager_answers(name) -> None:
    """On a CPU in bf16 the evaluator runs a frozen trace of the network:
    every shipped policy network gives the eager pass's probabilities (and
    values), at the batch sizes and colours of a search; in float32 it
    runs eagerly."""
    assert not PolicyEvaluator(WEIGHTS / f"{name}.pt", device="cpu", precision="fp32")._traces
    ev = PolicyEvaluator(WEIGHTS / f"{name}.pt", device="cpu", threads=1, precision="bf16")
    n = 19 if ev.supports(19) else ev.max_size
    ev.warm(n, 128)
    assert all(t is not None for t in ev._traced.values()) and len(ev._traced) == \
        (2 if ev.has_value else 1)
    rng = np.random.default_rng(5)
    for batch, komi in ((1, 6.5), (3, 0.5), (17, -7.5)):     # komi is an input, not a constant
        x = rng.integers(0, 2, (batch, N_PLANES, n, n)).astype(np.uint8)
        x[:, LEGAL] = 1
        c = rng.integers(1, 3, batch).astype(np.int32)
        traced = ev.evaluate(x, c), *(ev.evaluate_value(x, c, komi) if ev.has_value else ())
        eager_ev = PolicyEvaluator(WEIGHTS / f"{name}.pt", device="cpu", threads=1,
                                   precision="bf16")
        eager_ev._trace = lambda n, value: None
        eager = eager_ev.evaluate(x, c), *(eager_ev.evaluate_value(x, c, komi)
                                           if ev.has_value else ())
        for a, b in zip(traced, eager):
            assert np.abs(a - b).max() < 1e-5


def test_a_network_that_cannot_be_traced_runs_eagerly(monkeypatch, caplog) -> None:
    ev = PolicyEvaluator(device="cpu", threads=1, precision="bf16")

    def refuse(*args, **kwargs):
        raise RuntimeError("no tracing here")
    monkeypatch.setattr(torch.jit, "trace", refuse)
    x = np.zeros((2, N_PLANES, 9, 9), np.uint8)
    x[:, LEGAL] = 1
    with caplog.at_level("INFO", logger="engine"):
        probs, values = ev.evaluate_value(x, np.array([1, 2]), 7.5)
    assert probs.shape == (2, 81) and np.allclose(probs.sum(axis=1), 1, atol=1e-5)
    assert ev._traced == {(9, True, ev.precision): None}
    assert "no traced forward pass on 9x9 (RuntimeError: no tracing here); eager" in caplog.text
