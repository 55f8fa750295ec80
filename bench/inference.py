"""Inference speed of policy networks as the engine calls them.

    python -m bench.inference [--checkpoint PATH ...] [--model NAME ...]
        [--batches 1,16,128] [--threads 1,2] [--precisions fp32,bf16]
        [--seconds S] [--size 19] [--device cpu] [--memory-format auto]

Times :meth:`nets.evaluator.PolicyEvaluator.evaluate` - uint8 planes in,
masked softmax probabilities out as numpy, i.e. the conversion to float,
the forward pass, the LEGAL mask and the softmax, everything the engine's
prior worker pays per call - at each batch size of ``--batches``.

Networks: each ``--checkpoint`` file, and each ``--model`` registry name
(``nets.models.MODELS``: an untrained, freshly initialised net of that
shape, saved to a temporary checkpoint first, so that e.g. the 12-layer
``maddison12`` net's speed is known without a trained one); with neither,
the shipped default network (``nets.evaluator.DEFAULT_WEIGHTS``).

Input: real positions, not noise: a few seeded random games on an
``engine.board.Board`` (legal moves, mostly next to earlier stones) stopped
after 10% .. 55% of the board's points in moves, their planes from
``engine.features.planes`` (uint8, rank 9d) and the colour to move; a batch
cycles through them.

Timing: after three untimed warm-up calls, calls of one batch are repeated
for ``--seconds`` of wall time; positions/s = batch x calls / time (wall
clock, so other processes on a busy machine count: note the load
average).  Every (network, threads, batch) row is timed in each of
``--precisions`` (``fp32``, ``bf16`` autocast, ``auto``: see
nets/precision.py), side by side, with the ratio of the last to the first.
``--threads`` lists torch's intra-op thread counts (default: torch's, the
number of cores); ``--device`` is ``cpu`` by default (``auto``, ``cuda``,
``cuda:N`` time the GPU path, pinned memory as in the engine);
``--memory-format`` the activations' layout (``auto``, the engine's:
channels-last on a CPU, contiguous on a GPU; ``channels_last``,
``contiguous``: run twice to compare).

Prints one header line and a Markdown table.  Exit status 2 with
``error: ...`` for a missing or unreadable checkpoint, an unknown model
name, an unavailable device, a board size the net does not support, or bad
arguments.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from engine.board import BLACK, PASS, WHITE, Board
from engine.features import N_PLANES, planes
from nets.checkpoint import save_checkpoint
from nets.evaluator import DEFAULT_WEIGHTS, PolicyEvaluator
from nets.models import MODELS, build_model, count_parameters
from nets.precision import PRECISIONS, resolve as resolve_precision

N_POSITIONS = 8


class BenchError(Exception):
    """A user error: ``error: ...``, exit status 2."""


def positions(size: int, n: int = N_POSITIONS, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """(planes (n, N_PLANES, size, size) uint8, colours (n,)) of n positions
    of seeded random games, 10% .. 55% of the points played."""
    rng = np.random.default_rng(seed)
    lengths = np.linspace(0.10, 0.55, n) * size * size
    x = np.empty((n, N_PLANES, size, size), np.uint8)
    colors = np.empty(n, np.int64)
    for k, length in enumerate(lengths.astype(int)):
        board = Board(size)
        history: list[int] = []
        for _ in range(length):
            legal = board.legal_moves()
            if not legal:
                p = PASS
            else:
                near = [q for q in legal if any(board.color(q + d) in (BLACK, WHITE)
                                                for d in (-1, 1, -board.width, board.width))]
                pool = near if near and rng.random() < 0.7 else legal
                p = int(pool[rng.integers(len(pool))])
            board.play(p)
            history.insert(0, p)
        x[k] = planes(board, history[:4], rank=9, dtype=np.uint8)
        colors[k] = board.to_move
    return x, colors


def parse_counts(text: str, option: str = "--batches") -> list[int]:
    try:
        counts = [int(b) for b in text.split(",") if b.strip()]
    except ValueError:
        raise BenchError(f"{option} must be comma-separated positive integers, "
                         f"got {text!r}") from None
    if not counts or min(counts) < 1:
        raise BenchError(f"{option} must be comma-separated positive integers, got {text!r}")
    return counts


def parse_precisions(text: str) -> list[str]:
    out = [p.strip() for p in text.split(",") if p.strip()]
    if not out or any(p not in PRECISIONS for p in out):
        raise BenchError(f"--precisions must be a comma-separated list of "
                         f"{', '.join(PRECISIONS)}, got {text!r}")
    return out


def speed_table_head(columns: list[str], precisions: list[str]) -> str:
    """The Markdown head of a table of positions/s per precision, with the
    ratio of the last precision to the first when there are several."""
    cells = columns + [f"{p} pos/s" for p in precisions]
    if len(precisions) > 1:
        cells.append(f"{precisions[-1]}/{precisions[0]}")
    align = "|---|" + "---:|" * (len(cells) - 1)
    return "| " + " | ".join(cells) + " |\n" + align


def speed_table_row(cells: list, speeds: list[float]) -> str:
    """One row of that table: the leading cells, the speeds, the ratio."""
    out = [str(c) for c in cells] + [f"{v:,.0f}" for v in speeds]
    if len(speeds) > 1:
        out.append(f"{speeds[-1] / speeds[0]:.2f}")
    return "| " + " | ".join(out) + " |"


def time_batch(evaluator, x: np.ndarray, colors: np.ndarray, batch: int,
               seconds: float) -> dict:
    """Calls of one batch for ``seconds`` (after 3 warm-up calls)."""
    idx = np.arange(batch) % len(x)
    xb, cb = np.ascontiguousarray(x[idx]), colors[idx]
    for _ in range(3):
        evaluator.evaluate(xb, cb)
    calls = 0
    t0 = time.perf_counter()
    while True:
        evaluator.evaluate(xb, cb)
        calls += 1
        elapsed = time.perf_counter() - t0
        if elapsed >= seconds:
            break
    return {"batch": batch, "calls": calls, "seconds": elapsed,
            "positions_per_s": batch * calls / elapsed, "ms_per_batch": elapsed / calls * 1e3}


def load(spec: tuple[str, str], device: str, threads: int | None, tmp: Path,
         memory_format: str = "auto"):
    """(label, PolicyEvaluator) of ("checkpoint", path) or ("model", name)."""
    kind, value = spec
    if kind == "model":
        torch.manual_seed(0)
        path = save_checkpoint(tmp / f"{value}.pt", build_model(value))
        label = f"{value} (untrained)"
    else:
        path = Path(value)
        if not path.is_file():
            raise BenchError(f"checkpoint file {value} does not exist")
        label = f"{path.stem} ({_shown(path)})"
    try:
        return label, PolicyEvaluator(path, device=device, threads=threads,
                                      memory_format=memory_format)
    except ValueError as e:
        raise BenchError(str(e)) from None


def _shown(path: Path) -> str:
    """``path`` relative to the working directory when it lies below it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def run(args: argparse.Namespace) -> list[dict]:
    batches = parse_counts(args.batches)
    threads_list = parse_counts(args.threads, "--threads") if args.threads else [None]
    precisions = parse_precisions(args.precisions)
    if not 0 < args.seconds < math.inf:
        raise BenchError(f"--seconds must be positive, got {args.seconds}")
    if not 2 <= args.size <= 25:
        raise BenchError(f"--size must be in 2..25, got {args.size}")
    specs = args.nets or [("checkpoint", str(DEFAULT_WEIGHTS))]
    for kind, value in specs:       # fail before the slow part
        if kind == "checkpoint" and not Path(value).is_file():
            raise BenchError(f"checkpoint file {value} does not exist")
        if kind == "model" and value not in MODELS:
            raise BenchError(f"unknown model name {value!r} (known: "
                             f"{', '.join(sorted(MODELS))})")
    rows: list[dict] = []
    x = colors = None
    with tempfile.TemporaryDirectory(prefix="bench-inference-") as tmp:
        for spec in specs:
            label, ev = load(spec, args.device, None, Path(tmp), args.memory_format)
            if not ev.supports(args.size):
                raise BenchError(f"{label} runs on boards {ev.min_size}..{ev.max_size}, "
                                 f"not {args.size}")
            if x is None:
                x, colors = positions(args.size)
                auto = resolve_precision("auto", ev.device)
                layout = ("channels_last" if ev.memory_format == torch.channels_last
                          else "contiguous")
                print(f"PolicyEvaluator.evaluate, {args.size}x{args.size}, device {ev.device} "
                      f"(auto precision: {auto[0]}, {auto[1]}), {layout}, "
                      f"{args.seconds:g} s per cell, "
                      f"torch {torch.__version__}", flush=True)
                print(speed_table_head(["network", "params", "threads", "batch"], precisions),
                      flush=True)
            params = count_parameters(ev.model)
            for threads in threads_list:
                if threads is not None and ev.device.type == "cpu":
                    torch.set_num_threads(threads)
                shown = torch.get_num_threads() if ev.device.type == "cpu" else "-"
                for batch in batches:
                    speeds = []
                    for precision in precisions:
                        ev.precision = resolve_precision(precision, ev.device)[0]
                        r = time_batch(ev, x, colors, batch, args.seconds)
                        r.update(network=label, params=params, threads=shown,
                                 precision=ev.precision)
                        rows.append(r)
                        speeds.append(r["positions_per_s"])
                    print(speed_table_row([label, f"{params:,}", shown, batch], speeds),
                          flush=True)
            del ev
    return rows


class _Append(argparse.Action):
    """--checkpoint / --model, kept in command-line order in ``nets``."""

    def __call__(self, parser, namespace, values, option_string=None):
        nets = list(getattr(namespace, "nets", None) or [])
        nets.append((self.const, values))
        namespace.nets = nets


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.inference",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--checkpoint", action=_Append, const="checkpoint", dest="nets",
                    metavar="PATH", help="checkpoint to time (repeatable; default: "
                    "the shipped default network when no --model is given either)")
    ap.add_argument("--model", action=_Append, const="model", dest="nets", metavar="NAME",
                    help="time an untrained registry model, e.g. maddison12 (repeatable)")
    ap.add_argument("--batches", default="1,16,128", help="comma-separated batch sizes")
    ap.add_argument("--threads", default=None,
                    help="comma-separated torch CPU thread counts (default: torch's)")
    ap.add_argument("--precisions", default="fp32,bf16",
                    help="comma-separated precisions timed side by side (fp32, bf16, auto)")
    ap.add_argument("--seconds", type=float, default=5.0, help="timed seconds per row")
    ap.add_argument("--size", type=int, default=19, help="board size")
    ap.add_argument("--device", default="cpu", help="cpu (default), auto, cuda, cuda:N")
    ap.add_argument("--memory-format", default="auto",
                    choices=("auto", "channels_last", "contiguous"),
                    help="the activations' layout (default: the engine's, channels-last "
                         "on a CPU)")
    ap.set_defaults(nets=None)
    args = ap.parse_args(argv)
    try:
        run(args)
    except BenchError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
