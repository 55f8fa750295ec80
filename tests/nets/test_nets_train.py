"""nets.train: a short run lowers the loss, resume continues exactly, and
user errors exit with status 2 naming the culprit."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from nets import data as D  # noqa: E402
from nets import train as T  # noqa: E402
from nets.checkpoint import load_checkpoint  # noqa: E402
from nets_helpers import first_real_sgfs, make_sgf_dir  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TINY = ["--model", "small6", "--width", "8", "--layers", "2", "--batch", "16",
        "--val-positions", "64", "--threads", "1", "--positions-per-game", "4"]


@pytest.fixture(scope="module")
def cache(tmp_path_factory) -> Path:
    """A tiny cache: a few real games when the data are unpacked (they
    carry a learnable signal), synthetic games otherwise."""
    root = tmp_path_factory.mktemp("games")
    real = first_real_sgfs(12)
    if real:
        for i, p in enumerate(real):
            (root / f"g{i:02d}.sgf").write_bytes(p.read_bytes())
    else:
        make_sgf_dir(root, n_good=12, n_moves=80)
    out = root / "cache.npz"
    D.build_cache(root, out, val_fraction=0.2, workers=1, log=None)
    return out


def _metrics(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]


def test_short_run_lowers_the_loss(cache, tmp_path) -> None:
    out = tmp_path / "run"
    rc = T.main(["--data", str(cache), "--out", str(out), "--steps", "60",
                 "--eval-every", "20", "--optimizer", "adam", "--lr", "0.003",
                 "--halve-at", "none", *TINY])
    assert rc == 0
    rows = _metrics(out)
    assert [r["step"] for r in rows] == [0, 20, 40, 60]
    assert rows[-1]["val_loss"] < rows[0]["val_loss"] - 0.05
    assert rows[-1]["train_loss"] < rows[1]["train_loss"]
    assert all(0 <= r["top1"] <= r["top5"] <= r["top10"] <= 1 for r in rows)
    ck = load_checkpoint(out / "last.pt")
    m = ck.metadata
    assert m["steps"] == 60 and m["model"] == "small6" and m["config"]["width"] == 8
    assert m["accuracy"]["step"] == 60 and m["board_sizes"] == [19]
    assert m["data"]["train_games"] >= 1 and m["data"]["val_games"] >= 1
    assert ck.optimizer is not None
    assert (out / "best.pt").exists()


def test_sgd_schedule_halves() -> None:
    assert T.halve_points(None, 100) == [50, 75]
    assert T.halve_points("none", 100) == []
    assert T.halve_points("10,30", 100) == [10, 30]
    assert T.lr_at(0, 0.128, [50, 75]) == 0.128
    assert T.lr_at(50, 0.128, [50, 75]) == 0.064
    assert T.lr_at(99, 0.128, [50, 75]) == 0.032


def test_cosine_schedule_falls_to_nothing_at_the_last_step() -> None:
    """--cosine-from 100 with --steps 300, after a halving at 50: the rate
    is 0.5 until step 100, then half a cosine down to 0 at 300; a halving
    after the cosine's start no longer counts."""
    assert T.lr_at(99, 1.0, [50], 100, 300) == 0.5
    assert T.lr_at(100, 1.0, [50], 100, 300) == 0.5
    assert T.lr_at(200, 1.0, [50, 150], 100, 300) == pytest.approx(0.25)
    assert T.lr_at(300, 1.0, [50], 100, 300) == pytest.approx(0.0)
    assert T.lr_at(400, 1.0, [50], 100, 300) == pytest.approx(0.0)
    assert T.cosine_start(None, {"cosine_from": 7}) == 7
    assert T.cosine_start("none", {"cosine_from": 7}) is None
    assert T.cosine_start("12", {}) == 12


def test_resume_keeps_the_cosine_unless_told(cache, tmp_path, capsys) -> None:
    """The checkpoint keeps --cosine-from: a resumed run's rate goes on down
    the same curve (metrics.jsonl's lr), and the log says so."""
    run = tmp_path / "run"
    common = ["--data", str(cache), "--out", str(run), "--eval-every", "2", "--lr", "0.001",
              *TINY]
    assert T.main([*common, "--steps", "2", "--cosine-from", "0", "--halve-at", "none"]) == 0
    assert "from step 0 falling along a half cosine to 0 at step 2" in capsys.readouterr().err
    assert T.main([*common, "--steps", "4", "--resume", "--halve-at", "none"]) == 0
    assert "from step 0 falling along a half cosine to 0 at step 4" in capsys.readouterr().err
    assert load_checkpoint(run / "last.pt").metadata["train_state"]["cosine_from"] == 0
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    assert rows[-1]["step"] == 4 and rows[-1]["lr"] == pytest.approx(0.0)


def test_fitted_end_is_where_the_speed_reaches_in_the_time_left() -> None:
    assert T.fitted_end(100, 1000, 10.0, 20.0) == 300
    assert T.fitted_end(100, 250, 10.0, 20.0) == 250          # --steps caps it
    assert T.fitted_end(100, 1000, 10.0, -5.0) == 101         # past the deadline: the next step
    assert T.fitted_end(100, 1000, 0.0, 20.0) == 101


def test_fit_steps_ends_the_cosine_with_the_minutes(cache, tmp_path, capsys) -> None:
    """--fit-steps: a run told a million steps and 6 seconds stops by
    the clock, far short of its --steps, with its rate already low; without
    it the same run would stop at the full rate.  It needs --minutes and a
    half cosine."""
    out = tmp_path / "run"
    args = ["--data", str(cache), "--steps", "1000000", "--lr", "0.001",
            "--eval-every", "1000000", "--cosine-from", "0", "--halve-at", "none", *TINY]
    assert T.main([*args, "--out", str(out), "--minutes", "0.1", "--fit-steps"]) == 0
    assert "falling along a half cosine to 0 as the 0.1 minutes run out (at most step 1000000)" \
        in capsys.readouterr().err
    last = _metrics(out)[-1]
    assert 0 < last["step"] < 1000000
    assert last["lr"] < 0.5 * 0.001
    assert T.main([*args, "--out", str(tmp_path / "a"), "--fit-steps"]) == 2
    assert "--fit-steps fits the steps to --minutes" in capsys.readouterr().err
    args[args.index("--cosine-from") + 1] = "none"
    assert T.main([*args, "--out", str(tmp_path / "b"), "--minutes", "0.1", "--fit-steps"]) == 2
    assert "give --cosine-from" in capsys.readouterr().err


def test_auto_layout_is_channels_last_for_residual_nets_on_cpu_and_gpu() -> None:
    """--memory-format auto: the residual nets take channels-last on a CPU
    and a CUDA GPU (both measured faster), the others stay contiguous."""
    import torch
    from nets.models import MODELS
    for device in ("cpu", "cuda"):
        dev = torch.device(device)
        assert T.pick_memory_format("auto", MODELS["res6v"], dev) == torch.channels_last
        assert T.pick_memory_format("auto", MODELS["maddison12"], dev) == torch.contiguous_format
        assert T.pick_memory_format("contiguous", MODELS["res6v"], dev) == torch.contiguous_format
    assert T.pick_memory_format("auto", MODELS["res6v"], torch.device("mps")) \
        == torch.contiguous_format


def test_clip_grad_caps_the_step() -> None:
    """With plain SGD at lr 1, a step moves the weights by the gradient
    itself: clipped to norm 0.01 the move is 0.01 long, unclipped far longer."""
    from contextlib import nullcontext

    class Net(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = torch.nn.Linear(4, 3)

        def forward(self, x, c):
            return self.lin(x)

    x = torch.full((8, 4), 50, dtype=torch.uint8)
    y = torch.zeros(8, dtype=torch.long)
    c = torch.zeros(8, dtype=torch.long)
    moved = {}
    for clip in (None, 0.01):
        torch.manual_seed(0)
        net = Net()
        before = torch.cat([p.detach().flatten().clone() for p in net.parameters()])
        opt = torch.optim.SGD(net.parameters(), lr=1.0)
        T.train_step(net, opt, x, y, c, "cpu", nullcontext, clip=clip)
        after = torch.cat([p.detach().flatten() for p in net.parameters()])
        moved[clip] = float((after - before).norm())
    assert moved[0.01] == pytest.approx(0.01, rel=1e-3)
    assert moved[None] > 1.0


def test_resume_continues_the_step_count_exactly(cache, tmp_path) -> None:
    common = ["--data", str(cache), "--eval-every", "5", "--halve-at", "8", *TINY]
    straight = tmp_path / "straight"
    assert T.main([*common, "--out", str(straight), "--steps", "12"]) == 0
    split = tmp_path / "split"
    assert T.main([*common, "--out", str(split), "--steps", "7"]) == 0
    assert load_checkpoint(split / "last.pt").metadata["steps"] == 7
    # a second start without --resume refuses to overwrite the run
    assert T.main([*common, "--out", str(split), "--steps", "12"]) == 2
    assert T.main([*common, "--out", str(split), "--steps", "12", "--resume"]) == 0
    assert [r["step"] for r in _metrics(split)] == [0, 5, 7, 10, 12]
    a = load_checkpoint(straight / "last.pt")
    b = load_checkpoint(split / "last.pt")
    assert b.metadata["steps"] == 12 and b.metadata["train_state"]["step"] == 12
    for k, v in a.weights.items():
        assert torch.allclose(v, b.weights[k], atol=1e-5), k


def test_errors_exit_2_naming_the_culprit(cache, tmp_path, capsys) -> None:
    out = str(tmp_path / "r")
    assert T.main(["--data", str(cache), "--out", out, "--model", "nosuchnet"]) == 2
    assert "nosuchnet" in capsys.readouterr().err
    missing = str(tmp_path / "missing.npz")
    assert T.main(["--data", missing, "--out", out]) == 2
    assert "missing.npz" in capsys.readouterr().err
    empty = tmp_path / "emptydir"
    empty.mkdir()
    assert T.main(["--data", str(empty), "--out", out]) == 2
    assert "emptydir" in capsys.readouterr().err


def test_command_line_exit_status(tmp_path) -> None:
    proc = subprocess.run([sys.executable, "-m", "nets.train", "--data",
                           str(tmp_path / "nothing.npz"), "--out", str(tmp_path / "o")],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert "nothing.npz" in proc.stderr


def run_torchrun(args: list[str], timeout: float, log_dir: Path) -> tuple[int, str]:
    """torchrun --standalone ARGS: (exit status, stderr).  Each rank's
    stderr is also kept under LOG_DIR, so that a failure can show the
    failing rank's own last words, not only torchrun's summary.  Past the
    timeout torchrun gets SIGTERM, on which it stops its ranks (each in a
    session of its own, out of reach of a signal to its process group),
    then SIGKILL; the test fails rather than leave ranks behind."""
    proc = subprocess.Popen([sys.executable, "-m", "torch.distributed.run", "--standalone",
                             "--log-dir", str(log_dir), "--tee", "2", *args],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True)
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.terminate()
        try:
            _, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
        pytest.fail(f"torchrun still running after {timeout} s: {err[-2000:]}"
                    f"{rank_stderr(log_dir)}")
    return proc.returncode, err


def rank_stderr(log_dir: Path) -> str:
    """The last 2,000 characters of every rank's stderr under LOG_DIR
    (torchrun keeps them as RUN_ID/attempt_N/RANK/stderr.log)."""
    return "".join(f"\n--- {f.relative_to(log_dir)} ---\n{f.read_text(errors='replace')[-2000:]}"
                   for f in sorted(log_dir.rglob("stderr.log")))


@pytest.mark.slow
def test_torchrun_two_processes(cache, tmp_path) -> None:
    """The same command under torchrun trains with DDP (gloo on CPU)."""
    out, logs = tmp_path / "ddp", tmp_path / "logs"
    code, err = run_torchrun(
        ["--nproc_per_node", "2", "-m", "nets.train", "--data", str(cache), "--out", str(out),
         "--steps", "4", "--eval-every", "2", *TINY], timeout=300, log_dir=logs)
    assert code == 0, err[-2000:] + rank_stderr(logs)
    assert "2 process(es)" in err
    assert [r["step"] for r in _metrics(out)] == [0, 2, 4]
    m = load_checkpoint(out / "last.pt").metadata
    assert m["steps"] == 4 and m["train_state"]["world_size"] == 2


@pytest.mark.parametrize("option, value", [
    ("--lr", "nan"), ("--lr", "-1"), ("--weight-decay", "inf"), ("--val-positions", "-5"),
    ("--positions-per-game", "0"), ("--threads", "0"), ("--checkpoint-every", "0"),
    ("--workers", "-1"), ("--clip-grad", "0"), ("--clip-grad", "nan"),
    ("--clip-grad", "off"), ("--ema", "1"), ("--ema", "-0.1"), ("--cosine-from", "x"),
    ("--cosine-from", "-1"), ("--next-moves", "9"), ("--next-moves", "-1"),
    ("--next-weight", "nan"), ("--next-weight", "-2"), ("--new-block-scale", "-0.1"),
    ("--new-block-scale", "2"), ("--new-block-lr-scale", "0"),
    ("--new-block-lr-scale", "nan")])
def test_out_of_range_options_exit_2(cache, tmp_path, capsys, option, value) -> None:
    code = T.main(["--data", str(cache), "--out", str(tmp_path / "run"), "--steps", "1",
                   option, value])
    assert code == 2
    assert f"error: {option} must be" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_new_block_scale_needs_init_from(cache, tmp_path, capsys) -> None:
    code = T.main(["--data", str(cache), "--out", str(tmp_path / "run"), "--steps", "1",
                   "--new-block-scale", "0.1"])
    assert code == 2
    assert "--new-block-scale needs --init-from" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_a_moving_average_of_the_weights(cache, tmp_path, capsys) -> None:
    """--ema: every evaluation measures the average too, checkpoints carry
    it, a resumed run keeps averaging exactly as an uninterrupted one, and
    weights-only --ema ships it with its own accuracy."""
    from nets.checkpoint import main as checkpoint_main
    common = ["--data", str(cache), "--eval-every", "3", "--optimizer", "adam", "--lr", "0.003",
              "--halve-at", "none", *TINY]
    straight, split = tmp_path / "straight", tmp_path / "split"
    assert T.main([*common, "--out", str(straight), "--steps", "6", "--ema", "0.5"]) == 0
    assert "weights averaged (decay 0.5)" in capsys.readouterr().err
    rows = _metrics(straight)
    assert rows[0]["ema_val_loss"] == rows[0]["val_loss"]       # the average starts at the weights
    assert all(0 <= r["ema_top1"] <= r["ema_top5"] <= 1 for r in rows)
    assert rows[-1]["ema_val_loss"] != rows[-1]["val_loss"]
    assert T.main([*common, "--out", str(split), "--steps", "3", "--ema", "0.5"]) == 0
    assert T.main([*common, "--out", str(split), "--steps", "6", "--resume"]) == 0
    assert "weights averaged (decay 0.5)" in capsys.readouterr().err
    a, b = load_checkpoint(straight / "last.pt"), load_checkpoint(split / "last.pt")
    assert b.metadata["train_state"]["ema"] == 0.5 and set(b.ema) == set(b.weights)
    for k, v in a.ema.items():
        assert torch.allclose(v.float(), b.ema[k].float(), atol=1e-5), k
    shipped = tmp_path / "shipped.pt"
    assert checkpoint_main(["weights-only", "--ema", str(straight / "last.pt"), str(shipped)]) == 0
    ck = load_checkpoint(shipped)
    assert ck.ema is None and ck.optimizer is None and ck.metadata["weights"] == "ema"
    assert ck.metadata["accuracy"]["top1"] == rows[-1]["ema_top1"]
    for k, v in a.ema.items():
        assert torch.equal(v, ck.weights[k]), k
    assert checkpoint_main(["weights-only", "--ema", str(shipped), str(tmp_path / "x.pt")]) == 2
    assert "holds no moving average" in capsys.readouterr().err


def test_resume_keeps_the_clip_unless_told(cache, tmp_path, capsys) -> None:
    """A resumed run clips as its checkpoint did; --clip-grad none stops it."""
    run = tmp_path / "run"
    common = ["--data", str(cache), "--out", str(run), "--eval-every", "1000", *TINY]
    assert T.main([*common, "--steps", "2", "--clip-grad", "5"]) == 0
    assert "gradient norm clipped at 5" in capsys.readouterr().err
    assert T.main([*common, "--steps", "3", "--resume"]) == 0
    assert "gradient norm clipped at 5" in capsys.readouterr().err
    assert load_checkpoint(run / "last.pt").metadata["train_state"]["clip_grad"] == 5.0
    assert T.main([*common, "--steps", "4", "--resume", "--clip-grad", "none"]) == 0
    assert "clipped" not in capsys.readouterr().err
    assert load_checkpoint(run / "last.pt").metadata["train_state"]["clip_grad"] is None


def test_minutes_stop_a_run_that_resume_from_continues(cache, tmp_path) -> None:
    """--minutes stops at a step boundary with a checkpoint and a metrics
    row; --resume-from continues that checkpoint in a fresh folder, at its
    step, with its metrics."""
    first = tmp_path / "first"
    assert T.main(["--data", str(cache), "--out", str(first), "--steps", "100000",
                   "--eval-every", "100000", "--minutes", "0.05", "--optimizer", "adam",
                   *TINY]) == 0
    ck = load_checkpoint(first / "last.pt")
    step = ck.metadata["train_state"]["step"]
    assert 0 < step < 100000 and ck.optimizer is not None
    assert _metrics(first)[-1]["step"] == step
    shipped = tmp_path / "weights" / "tiny.pt"
    shipped.parent.mkdir()
    shipped.write_bytes((first / "last.pt").read_bytes())
    (shipped.parent / "tiny.metrics.jsonl").write_text((first / "metrics.jsonl").read_text())
    second = tmp_path / "second"
    assert T.main(["--data", str(cache), "--out", str(second), "--steps", str(step + 3),
                   "--eval-every", "1000", "--resume-from", str(shipped), *TINY]) == 0
    rows = _metrics(second)
    assert [r["step"] for r in rows] == [r["step"] for r in _metrics(first)] + [step + 3]
    state = load_checkpoint(second / "last.pt").metadata["train_state"]
    assert state["step"] == step + 3 and state["optimizer"] == "adam"   # the checkpoint's
    assert T.main(["--data", str(cache), "--out", str(tmp_path / "third"), "--steps", "9",
                   "--resume-from", str(shipped), "--optimizer", "sgd", *TINY]) == 2


def test_sigterm_stops_at_a_step_with_a_checkpoint(cache, tmp_path) -> None:
    """kill PID (SIGTERM) of a background run: it stops at the next step,
    evaluated and checkpointed, and --resume goes on from there."""
    import signal
    import time
    out = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-m", "nets.train", "--data", str(cache),
                             "--out", str(out), "--steps", "1000000", "--eval-every", "1000000",
                             *TINY], cwd=ROOT, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while not (out / "metrics.jsonl").exists() and time.time() < deadline:
        time.sleep(0.2)                 # the step-0 evaluation: training has begun
    time.sleep(1.0)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err[-2000:]
    assert "SIGTERM at step" in err
    step = load_checkpoint(out / "last.pt").metadata["train_state"]["step"]
    assert 0 < step < 1000000
    assert _metrics(out)[-1]["step"] == step


def test_masked_training_of_the_tied_net(cache, tmp_path) -> None:
    """clark8 trains with illegal points out of the softmax: nets.train runs
    it and records its (masked) loss, and a few steps on one batch fit it.
    (The cache's games are random moves where the data are not unpacked:
    nothing in them to learn that a loss on other games would show.)"""
    from nets.models import build_model
    out = tmp_path / "clark"
    args = ["--data", str(cache), "--out", str(out), "--model", "clark8", "--batch", "16",
            "--val-positions", "64", "--threads", "1", "--steps", "10", "--eval-every", "10",
            "--optimizer", "adam", "--lr", "0.003"]
    assert T.main(args) == 0
    rows = _metrics(out)
    assert [r["step"] for r in rows] == [0, 10]
    assert all(math.isfinite(r["val_loss"]) for r in rows)
    torch.manual_seed(0)
    net = build_model("clark8")
    x = (torch.rand(8, 38, 9, 9) < 0.3).float()
    x[:, 37] = 1                             # on the board
    y = torch.stack([torch.nonzero(x[i, 13].reshape(-1))[0, 0] for i in range(8)])
    opt = torch.optim.Adam(net.parameters(), lr=0.003)
    losses = []
    for _ in range(20):
        loss = T.masked_cross_entropy(net(x, 0), y, x)
        losses.append(loss.item())
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert losses[-1] < losses[0] - 0.3
    x = torch.zeros(2, 38, 19, 19)
    x[:, 13, 0, 0] = 1                       # one legal point
    y = torch.zeros(2, dtype=torch.long)
    logits = torch.randn(2, 361)
    assert T.masked_cross_entropy(logits, y, x).item() < 1e-3


def test_dann_trains(cache, tmp_path) -> None:
    out = tmp_path / "dann"
    args = ["--data", str(cache), "--out", str(out), "--model", "dann6", "--width", "16",
            "--layers", "2", "--batch", "16", "--val-positions", "64", "--threads", "1",
            "--steps", "30", "--eval-every", "30", "--optimizer", "adam", "--lr", "0.003"]
    assert T.main(args) == 0
    rows = _metrics(out)
    assert rows[-1]["val_loss"] < rows[0]["val_loss"]


@pytest.mark.parametrize("masked", [False, True])
def test_evaluate_scores_every_batch(masked) -> None:
    """Validation in several batches (a real run's 4,096 positions are 16):
    the loss and top-k counted over all of them, the same as in one batch."""
    from nets.models import build_model
    torch.manual_seed(0)
    net = build_model("small6", width=8, layers=2)
    x = (torch.rand(40, 38, 9, 9) < 0.5).to(torch.uint8).numpy()
    y = torch.randint(0, 81, (40,)).numpy()
    c = torch.randint(0, 2, (40,)).numpy()
    plain = __import__("contextlib").nullcontext
    whole = T.evaluate(net, (x, y, c), "cpu", plain, batch=40, masked=masked)
    parts = T.evaluate(net, (x, y, c), "cpu", plain, batch=16, masked=masked)
    assert parts["val_positions"] == 40
    assert parts["val_loss"] == pytest.approx(whole["val_loss"], rel=1e-5)
    assert all(parts[k] == whole[k] for k in ("top1", "top5", "top10"))


def test_res9_learns_passes(tmp_path) -> None:
    """The pass output is trained: on 9x9 games that end with two passes,
    passes are targets (the sampler with ``passes``), and a short run of
    res9 lowers the loss."""
    from nets_helpers import finished_game, write_sgf
    root = tmp_path / "games9"
    for i in range(16):
        write_sgf(root / f"g{i:02d}.sgf", finished_game(300 + i, 50), size=9)
    cache_path = tmp_path / "c9.npz"
    D.build_cache(root, cache_path, size=9, val_fraction=0.25, workers=1, log=None)
    cache = D.load_cache(cache_path)
    assert cache.positions(passes=True) == cache.positions() + 2 * cache.n_games
    sampler = D.PositionSampler(cache, passes=True, positions_per_game=52, symmetries=True)
    x, y, c = sampler.batch(cache.n_games * 52)
    assert (y == 81).sum() == 2 * cache.n_games     # every move once, the passes too
    assert (D.PositionSampler(cache).batch(200)[1] < 81).all()
    out = tmp_path / "res9"
    args = ["--data", str(cache_path), "--out", str(out), "--model", "res9", "--width", "16",
            "--blocks", "1", "--batch", "32", "--val-positions", "64", "--threads", "1",
            "--steps", "40", "--eval-every", "40", "--optimizer", "adam", "--lr", "0.003"]
    assert T.main(args) == 0
    rows = _metrics(out)
    assert rows[-1]["val_loss"] < rows[0]["val_loss"] - 0.05
    ck = load_checkpoint(out / "last.pt")
    assert ck.metadata["config"]["pass_output"] and ck.metadata["board_sizes"] == [9]


def test_next_moves_loss_leaves_out_the_ignored_targets() -> None:
    logits = torch.randn(3, 2, 25)
    t = torch.tensor([[4, D.IGNORE], [7, 9], [D.IGNORE, D.IGNORE]])
    want = (torch.nn.functional.cross_entropy(logits[:2, 0], t[:2, 0])
            + torch.nn.functional.cross_entropy(logits[1:2, 1], t[1:2, 1]))
    assert torch.allclose(T.next_moves_loss(logits, t), want)
    none = torch.full((2, 1), D.IGNORE)
    assert T.next_moves_loss(torch.randn(2, 1, 25), none).item() == 0.0


def test_next_moves_are_learnt_and_kept_by_a_resumed_run(cache, tmp_path, capsys) -> None:
    """--next-moves K: the model gets the head of the later moves (in its
    config), the loss adds their cross-entropies at --next-weight, a resumed
    run keeps both, another K is refused, and so is a net without the head."""
    res = ["--data", str(cache), "--model", "res6", "--blocks", "1", "--width", "8",
           "--batch", "16", "--val-positions", "64", "--threads", "1",
           "--positions-per-game", "4", "--eval-every", "2"]
    out = tmp_path / "run"
    assert T.main([*res, "--out", str(out), "--steps", "2", "--next-moves", "2",
                   "--next-weight", "0.5"]) == 0
    assert "the 2 moves after the next learnt too (each loss x0.5)" in capsys.readouterr().err
    rows = _metrics(out)
    # the training loss holds the later moves' too: well above the validation's
    assert rows[-1]["train_loss"] > rows[-1]["val_loss"] * 1.5
    assert T.main(["--data", str(cache), "--out", str(out), "--steps", "4", "--resume",
                   "--threads", "1"]) == 0
    assert "each loss x0.5" in capsys.readouterr().err
    m = load_checkpoint(out / "last.pt").metadata
    assert m["config"]["next_moves"] == 2 and m["train_state"]["next_weight"] == 0.5
    assert m["steps"] == 4
    assert T.main(["--data", str(cache), "--out", str(out), "--steps", "6", "--resume",
                   "--next-moves", "1"]) == 2
    assert "--next-moves differ from the run" in capsys.readouterr().err
    assert T.main([*TINY, "--data", str(cache), "--out", str(tmp_path / "plain"),
                   "--steps", "1", "--next-moves", "2"]) == 2
    assert "unknown config key(s) ['next_moves']" in capsys.readouterr().err
