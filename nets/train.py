"""Supervised training of the policy net on expert moves.

    python -m nets.train --data CACHE.npz --model small6 --out runs/x
                         [--steps N] [--batch 128] [--lr LR] [--optimizer sgd|adam]
                         [--eval-every N] [--resume] [--seed S] ...

``--data`` is a game cache from ``python -m nets.data build`` or a folder of
SGF files (a cache is then built into ``OUT/games.npz`` first).

Optimisation (Maddison et al. 2015): plain SGD, no momentum, batch 128,
learning rate 0.128 on the batch-mean loss, i.e. 0.001 per example (the
default ``--lr`` is 0.001 x batch, so changing ``--batch`` keeps the
per-example rate), halved at the steps of ``--halve-at`` (default: half
and three quarters of ``--steps``; a resumed run keeps the learning rate
and halving steps stored in its checkpoint unless ``--lr``/``--halve-at``
are given).  ``--optimizer adam`` uses Adam
(default lr 0.001) with the same halvings.  ``--cosine-from STEP`` suits a
long run that is resumed session after session: from STEP on the rate
falls along a half cosine from its value there to nothing at ``--steps``
(halvings after STEP are ignored; the checkpoint keeps STEP, and a run whose
``--steps`` is raised stretches the curve from where it is).  The loss is the cross-entropy of
the move played over all points (the net learns legality itself);
accuracy is measured with illegal points masked (the LEGAL plane), as the
engine plays.

Every ``--eval-every`` steps (and at step 0 and the end) the validation
positions (a fixed set from the cache's validation games, no symmetry) give
loss and top-1/5/10 accuracy; ``OUT/last.pt`` is written (weights,
optimizer, metadata), ``OUT/best.pt`` when top-1 improved, a line is added
to ``OUT/metrics.jsonl`` and ``OUT/curves.png`` is redrawn (when
matplotlib is installed).  ``--resume`` continues from ``OUT/last.pt``;
the batches are a function of (seed, process rank, step), so a resumed run
sees the batches an uninterrupted run would have seen.  ``--resume-from
CKPT`` continues a run saved elsewhere (a committed checkpoint with its
optimizer state, e.g. ``nets/weights/res6.pt``, its ``res6.metrics.jsonl``
seeding OUT's curves) in a fresh OUT.  ``--minutes M`` stops the run at the
first step boundary after M minutes, evaluated and checkpointed, so that
a run fits a time slot (a session, a GPU call) and the next one resumes it;
SIGTERM (``kill PID``) stops a one-process run the same way.  With
``--fit-steps`` the half cosine ends with the minutes rather than at
``--steps`` (then the most steps the run may take): after a warm-up of a
twentieth of the time, the last step is set from the speed measured since,
evaluations included, and set again every 50 steps, so that the rate
reaches nothing as the time runs out, however fast the machine turns out
to be.

``--ema DECAY`` (e.g. 0.999) keeps an exponential moving average of the
weights and batch-norm statistics beside them (PyTorch's ``AveragedModel``):
every evaluation measures it too (the ``ema_`` keys of metrics.jsonl,
dashed in the plot), checkpoints carry it, and ``python -m nets.checkpoint
weights-only --ema`` ships it.  A resumed run keeps its decay; ``--ema 0``
stops averaging.

Devices: CUDA when available, else CPU; ``--precision auto`` trains under
bf16 autocast where the device is fast at it (nets/precision.py) and says
which in its first log line.  Under ``torchrun``
(``RANK``/``WORLD_SIZE``/``LOCAL_RANK`` in the environment) the same command
trains with DistributedDataParallel: ``--batch`` is the global batch, split
evenly over the processes; rank 0 evaluates and writes the files.

Errors (missing or empty data, unknown model, a run already in OUT without
``--resume``) print ``error: ...`` naming the path or name and exit with 2.

Redrawing the curves of a finished run (matplotlib needed: the ``train``
extra, ``pip install -e .[train]``)::

    python -m nets.train --plot METRICS.jsonl OUT.png

e.g. ``python -m nets.train --plot nets/weights/small6.metrics.jsonl
nets/weights/small6.curves.png``; from Python,
``plot_curves(read_metrics(Path(METRICS)), Path(OUT))``.  Several metrics
files give one plot comparing the runs (validation loss and top-1 by step,
each run named by its folder)::

    python -m nets.train --plot runs/a/metrics.jsonl runs/b/metrics.jsonl ab.png
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import shutil
import signal
import sys
import threading
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from engine.features import FEATURE_VERSION, N_PLANES
from nets import data as D
from nets import ownership as O
from nets.checkpoint import load_checkpoint, save_checkpoint
from nets.models import (MODELS, TRUNK_PREFIXES, count_parameters, legal_mask, model_config,
                          model_from_config)
from nets.precision import PRECISIONS, resolve as resolve_precision, autocast as precision_autocast


class TrainError(Exception):
    """A user error: printed as ``error: ...``, exit status 2."""


# --------------------------------------------------------------------------
# arguments


def parse_args(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m nets.train",
                                 description="Train a policy or ownership net on a game cache.")
    ap.add_argument("--data", required=True, help="game cache (.npz) or a folder of SGF files")
    ap.add_argument("--late", type=float, default=0.0,
                    help="ownership models: the fraction of games drawn that give positions "
                         "of their last quarter only (the engine asks at game ends)")
    ap.add_argument("--labels", default=None,
                    help="final-ownership labels of the cache's games (JSON lines of "
                         "python -m bench.ownership_labels; several files comma-separated): "
                         "needed by ownership models; a value model learns them with its "
                         "ownership head")
    ap.add_argument("--model", default=None,
                    help=f"registry name ({', '.join(sorted(MODELS))}); default small6, "
                         "or the checkpoint's with --resume")
    ap.add_argument("--width", type=int, default=None, help="override the model's filters")
    ap.add_argument("--layers", type=int, default=None, help="override the model's layers")
    ap.add_argument("--blocks", type=int, default=None,
                    help="override a residual model's blocks")
    ap.add_argument("--next-moves", type=int, default=None, metavar="K",
                    help="residual policy and value models: also learn the K moves after "
                         "the next one (darkforest's extra targets), with a head that only "
                         "training uses")
    ap.add_argument("--next-weight", type=float, default=None, metavar="W",
                    help="with --next-moves: the weight of each later move's loss "
                         "(default 1, darkforest's; a resumed run keeps its own)")
    ap.add_argument("--out", required=True, help="run folder (checkpoints, metrics, plot)")
    ap.add_argument("--steps", type=int, default=10000, help="total training steps")
    ap.add_argument("--batch", type=int, default=128, help="global batch size")
    ap.add_argument("--lr", type=float, default=None,
                    help="learning rate on the batch-mean loss (default: sgd 0.001 x batch, "
                         "adam 0.001)")
    ap.add_argument("--optimizer", choices=("sgd", "adam"), default=None,
                    help="default: sgd, or the checkpoint's when resuming")
    ap.add_argument("--weight-decay", type=float, default=0.0)
    ap.add_argument("--clip-grad", default=None, metavar="NORM",
                    help="scale each step's gradient down to this global L2 norm where it "
                         "is larger (guards Adam against loss spikes); 'none' turns it off "
                         "(default: none, or the checkpoint's when resuming)")
    ap.add_argument("--halve-at", default=None,
                    help="comma-separated steps where the lr halves (default: steps/2, "
                         "3*steps/4; 'none' for a constant lr)")
    ap.add_argument("--cosine-from", default=None, metavar="STEP",
                    help="from this step on the lr falls along a half cosine to 0 at --steps "
                         "(default: never, or the checkpoint's when resuming; 'none' turns "
                         "it off)")
    ap.add_argument("--eval-every", type=int, default=1000)
    ap.add_argument("--checkpoint-every", type=int, default=None,
                    help="also write last.pt every N steps (default: at evaluations only)")
    ap.add_argument("--val-positions", type=int, default=4096)
    ap.add_argument("--positions-per-game", type=int, default=None,
                    help="positions taken from each replayed game (default 8, or the "
                         "checkpoint's when resuming; a value net learns faster from fewer: "
                         "the positions of a game share its result)")
    ap.add_argument("--workers", type=int, default=None,
                    help="data loader processes (default: 0 on CPU, min(8, cores-1) on CUDA)")
    ap.add_argument("--device", default="auto", help="auto, cpu, cuda, cuda:N")
    ap.add_argument("--precision", choices=PRECISIONS, default="auto",
                    help="bf16 autocast or float32; auto: bf16 on GPUs that support it and "
                         "on CPUs with AMX or AVX-512 BF16 (nets/precision.py)")
    ap.add_argument("--threads", type=int, default=None,
                    help="torch CPU threads (default: torch's; 1 is often faster on a "
                         "busy machine)")
    ap.add_argument("--compile", action="store_true", help="torch.compile the model")
    ap.add_argument("--memory-format", choices=("auto", "channels_last", "contiguous"),
                    default="auto",
                    help="the layout of the activations: auto takes channels_last for the "
                         "residual nets on a CPU (measured faster there), contiguous otherwise")
    ap.add_argument("--resume", action="store_true", help="continue from OUT/last.pt")
    ap.add_argument("--resume-from", default=None, metavar="CKPT",
                    help="when OUT holds no run yet, continue the run saved in CKPT (e.g. the "
                         "committed nets/weights/res6.pt: weights, optimizer, step, schedule); "
                         "a CKPT-stem.metrics.jsonl beside it seeds OUT's metrics")
    ap.add_argument("--init-trunk", default=None, metavar="CKPT",
                    help="a new run starts its trunk (stem and residual blocks) from a "
                         "trained net's, e.g. res6own from nets/weights/res6.pt")
    ap.add_argument("--init-from", default=None, metavar="CKPT",
                    help="a new run starts every tensor that a trained net has under the "
                         "same name and shape from it, e.g. res6v's trunk and policy head "
                         "from nets/weights/res6.pt")
    ap.add_argument("--new-block-scale", type=float, default=0.0, metavar="S",
                    help="with --init-from: the residual blocks the trained net lacks start "
                         "with their last batch-norm scale at S instead of 0 (0: they start "
                         "as the identity, the exact function of the trained net, but a "
                         "zero scale passes their convolutions almost no gradient)")
    ap.add_argument("--new-block-lr-scale", type=float, default=None, metavar="S",
                    help="the residual blocks that --init-from's net lacked learn at this "
                         "multiple of the learning rate (default 1, or the checkpoint's when "
                         "resuming)")
    ap.add_argument("--head-lr-scale", type=float, default=None,
                    help="value models: the value and ownership heads learn at this multiple "
                         "of the learning rate (a new head beside a trained trunk; default 1, "
                         "or the checkpoint's when resuming)")
    ap.add_argument("--train-only", choices=("all", "value"), default=None,
                    help="value models: 'value' trains the value head alone, every other "
                         "tensor frozen and the frozen batch norms at their running "
                         "statistics, so the policy and ownership outputs stay exactly the "
                         "starting net's (default all, or the checkpoint's when resuming)")
    ap.add_argument("--ema", type=float, default=None, metavar="DECAY",
                    help="keep and evaluate a moving average of the weights with this decay "
                         "per step, e.g. 0.999 (default: none, or the checkpoint's when "
                         "resuming; 0 stops it)")
    ap.add_argument("--ownership-weight", type=float, default=None,
                    help="value models with --labels: the weight of the ownership loss "
                         "(per-point binary cross-entropy over the labelled games' positions; "
                         "default 1, or the checkpoint's when resuming)")
    ap.add_argument("--value-weight", type=float, default=None,
                    help="value models: the weight of the value loss (binary cross-entropy "
                         "of the game's winner) beside the policy's (default 1, or the "
                         "checkpoint's when resuming)")
    ap.add_argument("--komi-spread", type=int, default=None, metavar="S",
                    help="value nets: half of the positions of games won by a count learn "
                         "the result under another komi, the game's plus a whole number "
                         "drawn from -S..S (default 0: every position at its game's komi; "
                         "a resumed run keeps its own)")
    ap.add_argument("--leads", default=None, metavar="FILES",
                    help="with --komi-spread: resigned games' estimated leads (JSON lines of "
                         "python -m bench.ownership_labels --net CKPT --leads; several files "
                         "comma-separated): their positions learn other komi as the counted "
                         "games' do (default: none, or the checkpoint's when resuming)")
    ap.add_argument("--minutes", type=float, default=None,
                    help="stop after this many minutes at a step boundary, evaluated and "
                         "checkpointed (resume later with --resume)")
    ap.add_argument("--fit-steps", action="store_true",
                    help="with --minutes and a half cosine: end the cosine when the minutes "
                         "run out, its last step set from the measured speed (--steps is then "
                         "the most steps the run may take)")
    ap.add_argument("--seed", type=int, default=None,
                    help="seed of the batches and the initial weights (default 0, or the "
                         "checkpoint's when resuming, so that a resumed run draws the batches "
                         "an uninterrupted one would)")
    ap.add_argument("--log-every", type=int, default=None,
                    help="progress line every N steps (default: about every 10 s)")
    return ap.parse_args(argv)


def check_options(args: argparse.Namespace) -> None:
    """TrainError naming the first option out of its range."""
    if args.lr is not None and not (math.isfinite(args.lr) and args.lr > 0):
        raise TrainError(f"--lr must be a positive number, got {args.lr}")
    if args.clip_grad not in (None, "none"):
        try:
            norm = float(args.clip_grad)
        except ValueError:
            norm = math.nan
        if not (math.isfinite(norm) and norm > 0):
            raise TrainError(f"--clip-grad must be a positive number or 'none', "
                             f"got {args.clip_grad}")
        args.clip_grad = norm
    if not (math.isfinite(args.weight_decay) and args.weight_decay >= 0):
        raise TrainError(f"--weight-decay must be a number >= 0, got {args.weight_decay}")
    for name in ("val_positions", "positions_per_game", "threads", "checkpoint_every"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise TrainError(f"--{name.replace('_', '-')} must be at least 1, got {value}")
    if args.workers is not None and args.workers < 0:
        raise TrainError(f"--workers must be at least 0, got {args.workers}")
    if args.minutes is not None and not (math.isfinite(args.minutes) and args.minutes > 0):
        raise TrainError(f"--minutes must be a positive number, got {args.minutes}")
    if args.fit_steps and args.minutes is None:
        raise TrainError("--fit-steps fits the steps to --minutes: give --minutes")
    if not (math.isfinite(args.late) and 0 <= args.late <= 1):
        raise TrainError(f"--late must lie in 0..1, got {args.late}")
    if args.resume_from is not None and not Path(args.resume_from).is_file():
        raise TrainError(f"--resume-from: checkpoint file {args.resume_from} does not exist")
    for name in ("init_trunk", "init_from"):
        path = getattr(args, name)
        if path is not None and not Path(path).is_file():
            raise TrainError(f"--{name.replace('_', '-')}: checkpoint file {path} does not exist")
    if args.init_trunk is not None and args.init_from is not None:
        raise TrainError("give --init-trunk or --init-from, not both")
    if not (math.isfinite(args.new_block_scale) and 0 <= args.new_block_scale <= 1):
        raise TrainError(f"--new-block-scale must be a number in 0..1, got {args.new_block_scale}")
    if args.new_block_scale and args.init_from is None:
        raise TrainError("--new-block-scale needs --init-from (it sets the blocks a trained "
                         "net lacks)")
    if args.new_block_lr_scale is not None and not (math.isfinite(args.new_block_lr_scale)
                                                    and args.new_block_lr_scale > 0):
        raise TrainError(f"--new-block-lr-scale must be a positive number, got "
                         f"{args.new_block_lr_scale}")
    if (args.new_block_lr_scale not in (None, 1.0) and args.init_from is None
            and not args.resume and args.resume_from is None):
        raise TrainError("--new-block-lr-scale needs --init-from (the blocks a trained net "
                         "lacks), or a run to resume that has them")
    if args.head_lr_scale is not None and not (math.isfinite(args.head_lr_scale)
                                               and args.head_lr_scale > 0):
        raise TrainError(f"--head-lr-scale must be a positive number, got {args.head_lr_scale}")
    if args.value_weight is not None and not (math.isfinite(args.value_weight)
                                              and args.value_weight >= 0):
        raise TrainError(f"--value-weight must be a number >= 0, got {args.value_weight}")
    if args.ownership_weight is not None and not (math.isfinite(args.ownership_weight)
                                                  and args.ownership_weight >= 0):
        raise TrainError(f"--ownership-weight must be a number >= 0, got {args.ownership_weight}")
    if args.next_weight is not None and not (math.isfinite(args.next_weight)
                                             and args.next_weight >= 0):
        raise TrainError(f"--next-weight must be a number >= 0, got {args.next_weight}")
    if args.komi_spread is not None and not 0 <= args.komi_spread <= 100:
        raise TrainError(f"--komi-spread must be 0..100 points, got {args.komi_spread}")
    if args.next_moves is not None and not 0 <= args.next_moves <= 8:
        raise TrainError(f"--next-moves must be 0..8, got {args.next_moves}")
    if args.ema is not None and not (0 <= args.ema < 1):
        raise TrainError(f"--ema must be a decay in [0, 1), got {args.ema}")
    cosine_start(args.cosine_from, {})


def init_trunk(model: torch.nn.Module, path: str, verbose: bool) -> None:
    """Copy the trunk (parameters and batch-norm statistics under
    ``TRUNK_PREFIXES``) of the net saved in ``path`` into ``model``;
    TrainError when the two trunks differ in their names or shapes."""
    weights = load_checkpoint(path).weights
    own = model.state_dict()
    names = [k for k in own if k.startswith(TRUNK_PREFIXES)]
    missing = [k for k in names if k not in weights or weights[k].shape != own[k].shape]
    if not names or missing:
        raise TrainError(f"--init-trunk: {path} has no trunk of this model's shape"
                         + (f" (first mismatch: {missing[0]})" if missing else ""))
    model.load_state_dict({k: weights[k] for k in names}, strict=False)
    if verbose:
        print(f"trunk from {path}: {len(names)} tensors", file=sys.stderr)


def init_from(model: torch.nn.Module, path: str, verbose: bool,
              new_block_scale: float = 0.0) -> list[int]:
    """Copy into ``model`` every tensor (parameters and batch-norm
    statistics) that the net saved in ``path`` has under the same name and
    shape; TrainError when there is none.  The residual blocks that the
    saved net lacks keep their fresh start, the identity (last batch-norm
    scale 0), or with ``new_block_scale`` that scale; their indices are
    returned."""
    weights = load_checkpoint(path).weights
    own = model.state_dict()
    names = [k for k in own if k in weights and weights[k].shape == own[k].shape]
    if not names:
        raise TrainError(f"--init-from: {path} has no tensor of this model's names and shapes")
    model.load_state_dict({k: weights[k] for k in names}, strict=False)
    fresh = [k for k in own if k not in names]
    new_blocks = sorted(int(k.split(".")[1]) for k in fresh
                        if k.startswith("blocks.") and k.endswith(".conv1.weight"))
    if new_block_scale:
        with torch.no_grad():
            for i in new_blocks:
                model.blocks[i].bn2.weight.fill_(new_block_scale)
    if verbose:
        print(f"from {path}: {len(names)} of {len(own)} tensors; new: "
              f"{', '.join(sorted({k.split('.')[0] for k in fresh})) or 'none'}"
              + (f"; new blocks' last batch-norm scale {new_block_scale:g}"
                 if new_block_scale else ""), file=sys.stderr)
    return new_blocks


#: the parameters of a value model's value head (nets.models.ResValueNet)
VALUE_PREFIX = "value_"
#: the parameters of a value model's value and ownership heads
HEAD_PREFIXES = (VALUE_PREFIX, "own_")


def freeze_all_but(model: torch.nn.Module, prefix: str) -> list[torch.nn.Module]:
    """Stop the gradient of every parameter whose name does not start with
    ``prefix``; returns the batch norms outside it, which the training loop
    keeps in evaluation mode (their running statistics fixed and used)."""
    for n, p in model.named_parameters():
        p.requires_grad_(n.startswith(prefix))
    return [m for n, m in model.named_modules()
            if isinstance(m, torch.nn.modules.batchnorm._BatchNorm) and not n.startswith(prefix)]


def param_groups(model: torch.nn.Module, head_scale: float, new_blocks: list[int] = (),
                 block_scale: float = 1.0) -> list[dict]:
    """The optimiser's parameter groups: one, or with ``head_scale`` != 1
    the value and ownership heads apart, and with ``block_scale`` != 1 the
    residual blocks ``new_blocks`` apart, their learning rates scaled (the
    ``lr_scale`` entry the training loop reads)."""
    prefixes = {"heads": HEAD_PREFIXES if head_scale != 1.0 else (),
                "blocks": tuple(f"blocks.{i}." for i in new_blocks) if block_scale != 1.0
                else ()}
    groups = {"rest": [], "heads": [], "blocks": []}
    for n, p in model.named_parameters():
        if not p.requires_grad:     # frozen (--train-only)
            continue
        kind = next((k for k, pre in prefixes.items() if pre and n.startswith(pre)), "rest")
        groups[kind].append(p)
    scales = {"rest": 1.0, "heads": head_scale, "blocks": block_scale}
    return [{"params": ps, "lr_scale": scales[k]} for k, ps in groups.items()
            if ps or k == "rest"]


def halve_points(spec: str | None, steps: int) -> list[int]:
    if spec is None:
        return sorted({steps // 2, (3 * steps) // 4} - {0})
    if spec.strip().lower() in ("", "none"):
        return []
    try:
        return sorted(int(x) for x in spec.split(",") if x.strip())
    except ValueError:
        raise TrainError(f"--halve-at must be comma-separated step numbers, got {spec!r}") from None


def lr_at(step: int, base: float, halvings: list[int], cosine_from: int | None = None,
          steps: int = 0) -> float:
    """Learning rate of the step that follows ``step`` completed steps:
    ``base`` halved at each of ``halvings`` passed; from ``cosine_from`` on
    (halvings after it ignored) the rate there times (1 + cos(pi t)) / 2, t
    going from 0 at ``cosine_from`` to 1 at ``steps``."""
    halved_at = step if cosine_from is None else min(step, cosine_from)
    rate = base * 0.5 ** sum(1 for h in halvings if halved_at >= h)
    if cosine_from is None or step <= cosine_from:
        return rate
    t = min((step - cosine_from) / max(steps - cosine_from, 1), 1.0)
    return rate * 0.5 * (1.0 + math.cos(math.pi * t))


FIT_EVERY = 50        # --fit-steps: steps between estimates of the last step
FIT_WARMUP = 0.05     # ... and the share of --minutes left out of the speed (cuDNN's trials, loaders)


def fitted_end(step: int, cap: int, steps_per_second: float, seconds_left: float) -> int:
    """--fit-steps: the step a run at ``step``, going at ``steps_per_second``,
    reaches when ``seconds_left`` have passed; at least the next step, at
    most ``cap``."""
    return max(step + 1, min(cap, step + int(steps_per_second * max(seconds_left, 0.0))))


def step_of(ck, state: dict) -> int:
    """The step a run resumed from checkpoint ``ck`` (None: a fresh run) goes on from."""
    return 0 if ck is None else int(state.get("step", ck.metadata.get("steps", 0)))


def cosine_start(spec: str | None, state: dict) -> int | None:
    """``--cosine-from``: a step number, 'none', or (None) the checkpoint's."""
    if spec is None:
        got = state.get("cosine_from")
        return None if got is None else int(got)
    if spec.strip().lower() == "none":
        return None
    try:
        step = int(spec)
    except ValueError:
        raise TrainError(f"--cosine-from must be a step number or 'none', got {spec!r}") from None
    if step < 0:
        raise TrainError(f"--cosine-from must be a step number >= 0, got {step}")
    return step


# --------------------------------------------------------------------------
# distributed


def distributed() -> tuple[int, int, int]:
    """(rank, world size, local rank) from torchrun's environment."""
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        return (int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]),
                int(os.environ.get("LOCAL_RANK", "0")))
    return 0, 1, 0


def pick_device(spec: str, local_rank: int) -> torch.device:
    if spec == "auto":
        spec = "cuda" if torch.cuda.is_available() else "cpu"
    if spec == "cuda":
        spec = f"cuda:{local_rank}"
    dev = torch.device(spec)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise TrainError(f"device {spec} asked for but CUDA is not available")
    return dev


# --------------------------------------------------------------------------
# progress, metrics, plot


class Progress:
    """A tqdm bar when installed and stderr is a terminal, else a line every
    few seconds (a log file of a background run stays readable)."""

    def __init__(self, total: int, start: int, enabled: bool, log_every: int | None):
        self.total, self.enabled, self.log_every = total, enabled, log_every
        self.bar = None
        self.last = time.time()
        if enabled and sys.stderr.isatty():
            try:
                from tqdm import tqdm
                self.bar = tqdm(total=total, initial=start, unit="step", dynamic_ncols=True)
            except ImportError:
                pass

    def update(self, step: int, text) -> None:
        """One step done; text() (called only when shown) describes it."""
        if not self.enabled:
            return
        now = time.time()
        if self.bar is not None:
            self.bar.update(1)
            if now - self.last >= 1:
                self.last = now
                self.bar.set_postfix_str(text(), refresh=False)
            return
        due = (step % self.log_every == 0) if self.log_every else (now - self.last >= 10)
        if due or step == self.total:
            self.last = now
            print(f"step {step}/{self.total} {text()}", file=sys.stderr, flush=True)

    def set_total(self, total: int) -> None:
        """The run's last step moved (--fit-steps)."""
        self.total = total
        if self.bar is not None:
            self.bar.total = total

    def write(self, text: str) -> None:
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.write(text, file=sys.stderr)   # tqdm.write defaults to stdout
        else:
            print(text, file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def read_metrics(path: Path, upto: int | None = None) -> list[dict]:
    if not path.exists():
        return []
    rows = []
    for line in path.read_text().splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue            # a line cut short by a crash
        if upto is None or row.get("step", 0) <= upto:
            rows.append(row)
    return rows


def write_metrics(path: Path, rows: list[dict]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("".join(json.dumps(r) + "\n" for r in rows))
    os.replace(tmp, path)


_warned_plot = False


#: validation accuracies drawn on the curves, by task (policy, ownership)
ACCURACY_KEYS = ("top1", "top5", "top10", "point_acc", "acc_early", "acc_middle", "acc_late",
                 "value_acc", "own_acc")


def _pyplot(path: Path, numbers: Path):
    """matplotlib's pyplot on the Agg backend, or None (saying once that no
    plot ``path`` is drawn and that the numbers are in ``numbers``)."""
    global _warned_plot
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        if not _warned_plot:
            print(f"matplotlib is not installed: no plot {path} (the numbers are in {numbers})",
                  file=sys.stderr)
            _warned_plot = True
        return None
    return plt


def _save_figure(plt, fig, path: Path) -> None:
    """Write the figure as a PNG through a temporary file renamed over
    ``path``, so that a viewer never reads half a file."""
    fig.tight_layout()
    tmp = path.with_name(".tmp-" + path.name)
    fig.savefig(tmp, format="png", dpi=80)
    plt.close(fig)
    os.replace(tmp, path)


def plot_curves(rows: list[dict], path: Path, metrics: Path | None = None) -> bool:
    """Loss and accuracy curves as a PNG; False (with one message) when
    matplotlib is missing.  ``metrics``: the file the rows came from, for
    that message (default: metrics.jsonl beside ``path``)."""
    plt = _pyplot(path, metrics or path.with_name("metrics.jsonl"))
    if plt is None:
        return False
    steps = [r["step"] for r in rows]
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    tr = [(r["step"], r["train_loss"]) for r in rows if r.get("train_loss") is not None]
    if tr:
        a.plot(*zip(*tr), label="train")
    a.plot(steps, [r["val_loss"] for r in rows], label="validation")
    vl = [(r["step"], r["value_loss"]) for r in rows if r.get("value_loss") is not None]
    if vl:
        a.plot(*zip(*vl), label="validation value")
    a.set_xlabel("step")
    a.set_ylabel("loss")
    a.legend()
    for k in ACCURACY_KEYS:
        pts = [(r["step"], r[k]) for r in rows if r.get(k) is not None]
        if pts:
            line, = b.plot(*zip(*pts), label=k)
            averaged = [(r["step"], r["ema_" + k]) for r in rows if r.get("ema_" + k) is not None]
            if averaged:
                b.plot(*zip(*averaged), "--", color=line.get_color(), label=k + " (averaged)")
    b.set_xlabel("step")
    b.set_ylabel("validation accuracy")
    b.set_ylim(0, 1)
    b.legend()
    _save_figure(plt, fig, path)
    return True


# --------------------------------------------------------------------------
# evaluation


@torch.no_grad()
def evaluate(model, val, device, autocast, batch: int = 256, masked: bool = False) -> dict:
    """Loss (all points, or the legal ones for a net trained ``masked``)
    and masked top-1/5/10 accuracy on fixed positions (the policy task;
    the ownership task's is nets.ownership.evaluate)."""
    x_all, y_all, c_all = val[:3]
    v_all = val[3] if len(val) > 3 else None
    o_all = val[4:6] if len(val) > 5 else None
    o_loss, o_right, o_counted, o_n = 0.0, 0.0, 0.0, 0.0
    was_training = model.training
    model.eval()
    n = len(y_all)
    loss_sum, hits = 0.0, {1: 0, 5: 0, 10: 0}
    v_loss, v_hits, v_n = 0.0, 0.0, 0.0
    for a in range(0, n, batch):
        x = torch.from_numpy(x_all[a:a + batch]).to(device)
        y = torch.from_numpy(y_all[a:a + batch]).to(device)
        c = torch.from_numpy(c_all[a:a + batch]).to(device)
        with autocast():
            if v_all is None:
                logits = model(x.float(), c)
            else:
                v = torch.from_numpy(v_all[a:a + batch]).to(device)
                logits, value, own = model(x.float(), c, v[:, 2])
        if o_all is not None:
            t = torch.from_numpy(o_all[0][a:a + batch]).to(device)
            w = torch.from_numpy(o_all[1][a:a + batch]).to(device)
            own = own.float()
            o_loss += float(O.masked_loss(own, t, w, "sum"))
            decided = (t != 0.5) & (w[:, None] > 0)
            o_right += float((((own > 0) == (t > 0.5)) & decided).sum())
            o_counted += float(decided.sum())
            o_n += float(w.sum())
        if v_all is not None:
            value, w = value.float(), v[:, 1]
            v_loss += float((F.binary_cross_entropy_with_logits(
                value, v[:, 0], reduction="none") * w).sum())
            v_hits += float((((value > 0).float() == v[:, 0]).float() * w).sum())
            v_n += float(w.sum())
        logits = logits.float()
        legal = legal_mask(x, logits.shape[1])
        scored = logits.masked_fill(~legal, -1e4) if masked else logits
        loss_sum += F.cross_entropy(scored, y, reduction="sum").item()
        top = logits.masked_fill(~legal, float("-inf")).topk(10, dim=1).indices
        match = top == y[:, None]
        for k in hits:
            hits[k] += int(match[:, :k].any(dim=1).sum())
    model.train(was_training)
    result = {"val_loss": loss_sum / n, "top1": hits[1] / n, "top5": hits[5] / n,
              "top10": hits[10] / n, "val_positions": n}
    if v_all is not None and v_n:
        result.update(value_loss=v_loss / v_n, value_acc=v_hits / v_n, value_positions=int(v_n))
    if o_n:
        result.update(own_loss=o_loss / o_n, own_acc=o_right / max(o_counted, 1.0),
                      own_positions=int(o_n))
    return result


# --------------------------------------------------------------------------
# main


def resolve_data(spec: str, out: Path, seed: int, is_main: bool) -> D.GameCache:
    path = Path(spec)
    if path.is_dir():
        cache_path = out / "games.npz"
        if not cache_path.exists():
            if not is_main:
                raise TrainError(f"{spec} is a folder: build a cache with "
                                 f"'python -m nets.data build {spec} CACHE.npz' first")
            D.find_sgf_files(path)           # a clear error for an empty folder
            print(f"building a game cache of {spec} in {cache_path}", file=sys.stderr)
            D.build_cache(path, cache_path, seed=seed)
        return D.load_cache(cache_path)
    if not path.exists():
        raise TrainError(f"data file {spec} does not exist")
    return D.load_cache(path)


def train(args: argparse.Namespace) -> dict:
    check_options(args)
    rank, world, local_rank = distributed()
    is_main = rank == 0
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    device = pick_device(args.device, local_rank)
    if world > 1:
        import torch.distributed as dist
        if device.type == "cuda":
            torch.cuda.set_device(device)
        dist.init_process_group("nccl" if device.type == "cuda" else "gloo")
    if args.batch < 1 or args.batch % world:
        raise TrainError(f"--batch {args.batch} must be a positive multiple of the "
                         f"{world} processes")
    if args.steps < 0 or args.eval_every < 1:
        raise TrainError("--steps must be >= 0 and --eval-every >= 1")
    out = Path(args.out)
    last = out / "last.pt"
    if is_main:
        out.mkdir(parents=True, exist_ok=True)

    ck = None
    if last.exists():
        if not args.resume:
            raise TrainError(f"{out} already holds a run ({last}): pass --resume to "
                             f"continue it or choose another --out")
        ck = load_checkpoint(last)
    elif args.resume_from is not None:
        ck = load_checkpoint(args.resume_from)
        seed_metrics = Path(args.resume_from).with_suffix(".metrics.jsonl")
        if is_main and seed_metrics.is_file():
            shutil.copyfile(seed_metrics, out / "metrics.jsonl")
    elif args.resume and is_main:
        print(f"nothing to resume in {out}: starting a new run", file=sys.stderr)

    # a resumed run keeps its settings unless told otherwise (its optimizer,
    # learning rate, schedule and clip below)
    state = ck.metadata.get("train_state", {}) if ck is not None else {}
    for name, default in (("seed", 0), ("value_weight", 1.0), ("head_lr_scale", 1.0),
                          ("positions_per_game", 8), ("ema", 0.0), ("ownership_weight", 1.0),
                          ("next_weight", 1.0), ("new_block_lr_scale", 1.0),
                          ("komi_spread", 0), ("train_only", "all")):
        if getattr(args, name) is None:
            setattr(args, name, type(default)(state.get(name, default)))
    # a value net keeps learning ownership from the labels it learnt from, and
    # other komi from the resigned games' leads
    for name, without in (("labels", "no ownership is learnt"),
                          ("leads", "the resigned games keep their komi")):
        kept = state.get(name)
        if getattr(args, name) is None and kept:
            if all(Path(p).is_file() for p in kept.split(",")):
                setattr(args, name, kept)
            elif is_main:
                print(f"warning: {kept}, the {name} the run learnt from, are missing: "
                      f"{without} (give --{name})", file=sys.stderr)

    # model
    overrides = {k: v for k, v in (("width", args.width), ("layers", args.layers),
                                   ("blocks", args.blocks), ("next_moves", args.next_moves))
                 if v is not None}
    if ck is not None:
        config = ck.metadata["config"]
        if args.model is not None and args.model != ck.metadata.get("model"):
            raise TrainError(f"{last} is a {ck.metadata.get('model')!r} model, not "
                             f"{args.model!r}")
        if any(config.get(k, 0 if k == "next_moves" else None) != v
               for k, v in overrides.items()):
            raise TrainError(f"--width/--layers/--blocks/--next-moves differ from the run "
                             f"in {ck.path}")
    else:
        try:
            config = model_config(args.model or "small6", **overrides)
        except ValueError as e:
            raise TrainError(str(e)) from None
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    model = model_from_config(config)
    new_blocks = [int(i) for i in state.get("new_blocks", [])]
    if ck is not None:
        model.load_state_dict(ck.weights)
    elif args.init_trunk is not None:
        init_trunk(model, args.init_trunk, is_main)
    elif args.init_from is not None:
        new_blocks = init_from(model, args.init_from, is_main, args.new_block_scale)
    if args.new_block_lr_scale != 1 and not new_blocks:
        raise TrainError("--new-block-lr-scale: this run has no new residual blocks (a deeper "
                         "net started with --init-from from a shallower one has)")
    model.to(device)
    if device.type == "cuda":       # every training batch has one shape: let cuDNN pick its kernels
        torch.backends.cudnn.benchmark = True
    memory_format = pick_memory_format(args.memory_format, config, device)
    model.to(memory_format=memory_format)
    ema = None
    if args.ema:
        from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn
        ema = AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(args.ema),
                            use_buffers=True)
        if ck is not None and ck.ema is not None:
            ema.module.load_state_dict(ck.ema)
            ema.n_averaged.fill_(1)     # averaging goes on from the saved average

    # data (after the model: an unknown model name is reported first)
    cache = resolve_data(args.data, out, args.seed, is_main)
    train_games, val_games = cache.split()
    if len(val_games) == 0:
        if is_main:
            print("warning: the cache has no validation games: validating on training "
                  "games", file=sys.stderr)
        val_games = train_games
    if cache.positions(train_games) == 0:
        raise TrainError(f"no training positions in {cache.path}")
    task = config.get("task", "policy")
    next_moves = int(config.get("next_moves", 0))
    if task == "ownership" and next_moves:
        raise TrainError(f"--next-moves is for move prediction; {config['name']} learns "
                         f"final ownership")
    if task == "ownership" and args.labels is None:
        raise TrainError(f"{config['name']} learns final ownership: give its labels "
                         f"with --labels (python -m bench.ownership_labels)")
    if task != "ownership" and (args.late or (args.labels is not None
                                              and not getattr(model, "has_value", False))):
        raise TrainError(f"--labels and --late are for ownership and value models; "
                         f"{config['name']} learns moves")
    if args.komi_spread and not getattr(model, "has_value", False):
        raise TrainError(f"--komi-spread is for value models; {config['name']} has no value "
                         f"head")
    leads = None
    if args.leads is not None:
        if not args.komi_spread:
            raise TrainError("--leads is for --komi-spread: without it every position learns "
                             "its game's komi")
        leads, lead_counts = D.load_leads([p for p in args.leads.split(",") if p], cache)
    if args.train_only == "value" and not getattr(model, "has_value", False):
        raise TrainError(f"--train-only value is for value models; {config['name']} has no "
                         f"value head")
    frozen_norms = freeze_all_but(model, VALUE_PREFIX) if args.train_only == "value" else []
    if args.labels is not None:
        labelled, owners, label_counts = O.load_labels(
            [p for p in args.labels.split(",") if p], cache)
    owner_targets = None
    if task == "ownership":
        is_val = cache.val[labelled]
        if not is_val.any() or is_val.all():
            raise TrainError(f"{args.labels} must label games on both sides of the cache's "
                             f"validation split ({int(is_val.sum())} of {len(labelled)} "
                             f"labelled games are validation games)")
        train_games, val_games = labelled[~is_val], labelled[is_val]
        own_train, own_val = owners[~is_val], owners[is_val]
    elif args.labels is not None:
        owner_targets = O.OwnerTargets(labelled, owners, cache.size)

    # a resumed run keeps its optimizer, learning rate and schedule unless told otherwise
    if state.get("optimizer") is not None and args.optimizer not in (None, state["optimizer"]):
        raise TrainError(f"the run to resume was trained with {state['optimizer']}, "
                         f"not {args.optimizer}")
    args.optimizer = args.optimizer or state.get("optimizer") or "sgd"
    if args.lr is not None:
        base_lr = args.lr
    elif "base_lr" in state:
        base_lr = float(state["base_lr"])
    else:
        base_lr = 0.001 * args.batch if args.optimizer == "sgd" else 0.001
    if args.clip_grad is None:
        args.clip_grad = state.get("clip_grad")
    elif args.clip_grad == "none":
        args.clip_grad = None
    if args.halve_at is None and "halve_at" in state:
        halvings = [int(h) for h in state["halve_at"]]
    else:
        halvings = halve_points(args.halve_at, args.steps)
    cosine_from = cosine_start(args.cosine_from, state)
    if args.fit_steps and cosine_from is None:
        raise TrainError("--fit-steps moves the end of the half cosine: give --cosine-from")
    step = step_of(ck, state)
    if args.fit_steps and step >= args.steps:
        raise TrainError(f"--fit-steps: the run is at step {step} already, "
                         f"--steps {args.steps} leaves it none")
    if args.optimizer == "sgd":
        opt = torch.optim.SGD(param_groups(model, args.head_lr_scale, new_blocks,
                                           args.new_block_lr_scale), lr=base_lr, momentum=0.0,
                              weight_decay=args.weight_decay)
    else:
        opt = torch.optim.Adam(param_groups(model, args.head_lr_scale, new_blocks,
                                           args.new_block_lr_scale), lr=base_lr,
                               weight_decay=args.weight_decay)
    if ck is not None:
        if ck.optimizer is not None:
            # the groups' rates are this run's: a resumed run told another
            # --head-lr-scale or --new-block-lr-scale learns at it
            scales = [g["lr_scale"] for g in opt.param_groups]
            try:
                opt.load_state_dict(ck.optimizer)
                for g, scale in zip(opt.param_groups, scales):
                    g["lr_scale"] = scale
            except ValueError as e:     # parameter groups split otherwise than when saved
                raise TrainError(f"{ck.path}: its optimizer state does not fit this run's "
                                 f"parameter groups ({e}); resume with the learning-rate "
                                 f"scales and --train-only it was saved with") from None
        elif is_main:
            print(f"{ck.path} holds no optimizer state: a fresh {args.optimizer} goes on "
                  f"from step {step}", file=sys.stderr)

    net = model

    def train_mode() -> None:
        net.train()
        for m in frozen_norms:      # a frozen trunk computes what inference computes
            m.eval()

    if args.compile:
        net = torch.compile(net)
    if world > 1:
        from torch.nn.parallel import DistributedDataParallel as DDP
        net = DDP(net, device_ids=[device.index] if device.type == "cuda" else None)

    cuda = device.type == "cuda"
    precision, why = resolve_precision(args.precision, device)

    def autocast():
        return precision_autocast(device, precision)

    workers = args.workers if args.workers is not None else (
        min(8, max(0, (os.cpu_count() or 1) - 1)) if cuda else 0)
    per_rank = args.batch // world
    if task == "ownership":
        dataset = O.OwnershipDataset(cache, train_games, own_train, per_rank, start_step=step,
                                     positions_per_game=args.positions_per_game,
                                     seed=args.seed, stream=rank, late=args.late)
        val = O.fixed_positions(cache, val_games, own_val, args.val_positions) if is_main else None
        evaluate_fn, headline = O.evaluate, "point_acc"

        def loss_fn(logits, target, x):
            return O.loss_fn(logits, target)
    else:
        passes = bool(config.get("pass_output"))      # passes are targets too
        values = bool(getattr(model, "has_value", False))
        dataset = D.PositionDataset(cache, train_games, per_rank, start_step=step,
                                    positions_per_game=args.positions_per_game, seed=args.seed,
                                    stream=rank, passes=passes, values=values,
                                    owners=owner_targets, next_moves=next_moves,
                                    komi_spread=args.komi_spread, leads=leads)
        val = (D.fixed_positions(cache, val_games, args.val_positions, passes=passes,
                                 values=values, owners=owner_targets) if is_main else None)
        headline = "top1"
        if config.get("masked"):
            def evaluate_fn(model, val, device, autocast):
                return evaluate(model, val, device, autocast, masked=True)
        else:
            evaluate_fn = evaluate
        if values:
            if not cache.value_games()[train_games].any():
                raise TrainError(f"{cache.path} holds no game results a value net can learn "
                                 f"from (rebuild it with python -m nets.data build)")

            def loss_fn(out, y, x, v, own=None):
                return policy_value_loss(out, y, v, args.value_weight, own,
                                         args.ownership_weight)
        elif config.get("masked"):
            loss_fn = masked_cross_entropy
        else:
            def loss_fn(logits, y, x):
                return F.cross_entropy(logits, y)
    loader = torch.utils.data.DataLoader(dataset, batch_size=None, num_workers=workers,
                                         pin_memory=cuda)

    metrics_path = out / "metrics.jsonl"
    rows = read_metrics(metrics_path, upto=step) if is_main else []
    best = max((r[headline] for r in rows if r.get(headline) is not None), default=-1.0)
    data_summary = {
        "cache": str(cache.path), "data_dir": cache.summary.get("data_dir"),
        "games": cache.n_games, "train_games": int(len(train_games)),
        "val_games": int(len(val_games)), "train_positions": cache.positions(train_games),
        "sources": cache.summary.get("sources"), "skipped": cache.summary.get("skipped"),
    }
    if args.labels is not None:
        data_summary["labels"] = {"file": str(args.labels), **label_counts}
    if leads is not None:
        data_summary["leads"] = {"file": str(args.leads), **lead_counts}

    trunk_from = args.init_trunk or args.init_from or (
        ck.metadata.get("init_trunk") if ck is not None else None)

    def save(path: Path, result: dict | None) -> None:
        meta = {
            "board_sizes": [cache.size],
            "data": data_summary,
            "steps": step,
            "positions_seen": step * args.batch,
            "init_trunk": trunk_from,
            "train_state": {"step": step, "seed": args.seed, "optimizer": args.optimizer,
                            "base_lr": base_lr, "halve_at": halvings, "batch": args.batch,
                            "cosine_from": cosine_from,
                            "world_size": world, "positions_per_game": args.positions_per_game,
                            "clip_grad": args.clip_grad, "value_weight": args.value_weight,
                            "head_lr_scale": args.head_lr_scale, "ema": args.ema,
                            "new_blocks": new_blocks,
                            "new_block_lr_scale": args.new_block_lr_scale,
                            "ownership_weight": args.ownership_weight,
                            "next_weight": args.next_weight,
                            "komi_spread": args.komi_spread,
                            "train_only": args.train_only,
                            "labels": args.labels if task != "ownership" else None,
                            "leads": args.leads},
        }
        if result is not None:
            keys = ACCURACY_KEYS + ("val_loss", "val_positions", "value_loss", "own_loss")
            meta["accuracy"] = {k: result[k] for k in keys + tuple("ema_" + k for k in keys)
                                if k in result}
            meta["accuracy"]["step"] = result["step"]
        save_checkpoint(path, model, metadata=meta, optimizer=opt if path == last else None,
                        ema=ema.module if ema is not None else None)

    def checkpoint_and_log(result: dict | None) -> None:
        nonlocal best
        if result is not None:
            rows.append(result)
            write_metrics(metrics_path, rows)
            plot_curves(rows, out / "curves.png")
        save(last, result or (rows[-1] if rows else None))
        if result is not None and result[headline] > best:
            best = result[headline]
            save(out / "best.pt", result)

    progress = Progress(args.steps, step, is_main, args.log_every)
    if is_main:
        progress.write(
            f"{config['name']}: {count_parameters(model):,} parameters, device {device}, "
            f"{world} process(es), {workers} loader worker(s); {len(train_games)} training / "
            f"{len(val_games)} validation games, {len(val[1])} validation positions; "
            + (f"labels {args.labels} ({label_counts['used']} games used, "
               f"{label_counts['disagree']} disagreeing with the record left out"
               + (f"; ownership loss x{args.ownership_weight:g}" if task != "ownership" else "")
               + "); " if args.labels is not None else "") +
            f"{args.optimizer} lr {base_lr:g}"
            + (f" (value and ownership heads x{args.head_lr_scale:g})"
               if args.head_lr_scale != 1 and len(opt.param_groups) > 1 else "")
            + (f" (new blocks {', '.join(map(str, new_blocks))} x{args.new_block_lr_scale:g})"
               if args.new_block_lr_scale != 1 and new_blocks else "")
            + (f", value loss x{args.value_weight:g}" if getattr(model, "has_value", False)
               else "")
            + (f", counted games' komi spread by up to {args.komi_spread} points"
               if args.komi_spread else "")
            + (f" (and {lead_counts['used']} resigned games' by their leads in {args.leads})"
               if leads is not None else "")
            + (", the value head alone learning (the rest frozen)"
               if args.train_only == "value" else "")
            + (f", the {next_moves} moves after the next learnt too (each loss x"
               f"{args.next_weight:g})" if next_moves else "")
            + f", halved at {halvings or 'never'}"
            + (f", from step {cosine_from} falling along a half cosine to 0 at step {args.steps}"
               if cosine_from is not None and not args.fit_steps else "")
            + (f", from step {cosine_from} falling along a half cosine to 0 as the "
               f"{args.minutes:g} minutes run out (at most step {args.steps})"
               if args.fit_steps else "")
            + (f", gradient norm clipped at {args.clip_grad:g}" if args.clip_grad else "")
            + (f", weights averaged (decay {args.ema:g})" if ema is not None else "")
            + f"; features v{FEATURE_VERSION} ({N_PLANES} planes); precision {precision} ({why})"
            + ("; channels-last" if memory_format == torch.channels_last else ""))

    def run_eval(train_loss):
        result = evaluate_fn(model, val, device, autocast)
        if ema is not None:
            averaged = evaluate_fn(ema.module, val, device, autocast)
            result.update({"ema_" + k: v for k, v in averaged.items() if not k.endswith("positions")})
        result.update(step=step, train_loss=train_loss,
                      lr=lr_at(step, base_lr, halvings, cosine_from, args.steps),
                      seconds=round(time.time() - t_start, 1))
        accs = " ".join(f"{k} {result[k]:.4f}" for k in ACCURACY_KEYS
                        if result.get(k) is not None)
        progress.write(f"step {step}: val loss {result['val_loss']:.4f} {accs}"
                       + (f" value loss {result['value_loss']:.4f}" if "value_loss" in result else "")
                       + (f" ownership loss {result['own_loss']:.4f}" if "own_loss" in result
                          else "")
                       + (f"; averaged: top1 {result['ema_top1']:.4f}"
                          + (f" value loss {result['ema_value_loss']:.4f}"
                             if "ema_value_loss" in result else "")
                          if "ema_top1" in result else "")
                       + (f", train loss {train_loss:.4f}" if train_loss is not None else ""))
        train_mode()
        return result

    # SIGTERM is honoured from here on, the step-0 evaluation included
    with _sigterm_stops(world == 1) as terminated:
        t_start = time.time()
        if is_main and step == 0 and not rows:
            checkpoint_and_log(run_eval(None))
        if world > 1:
            torch.distributed.barrier()

        train_mode()
        loss_sum = torch.zeros((), device=device)
        loss_n = 0
        window_t, window_steps = time.time(), 0
        it = iter(loader)
        deadline = None if args.minutes is None else t_start + 60.0 * args.minutes
        steps_cap, fit_mark = args.steps, None      # --fit-steps: (time, step) after warm-up
        while step < args.steps:
            lr = lr_at(step, base_lr, halvings, cosine_from, args.steps)
            for g in opt.param_groups:
                g["lr"] = lr * g.get("lr_scale", 1.0)
            batch = next(it)
            loss = train_step(net, opt, *batch[:3], device, autocast, loss_fn, args.clip_grad,
                              memory_format=memory_format,
                              v=batch[3] if len(batch) > 3 else None,
                              own=batch[4:6] if len(batch) > 4 else None,
                              next_moves=next_moves, next_weight=args.next_weight)
            if ema is not None:
                ema.update_parameters(model)
            step += 1
            loss_sum += loss.detach()
            loss_n += 1
            window_steps += 1
            now = time.time()
            speed = window_steps * args.batch / max(now - window_t, 1e-9)
            if now - window_t >= 10:
                window_t, window_steps = now, 0
            if args.fit_steps and step % FIT_EVERY == 0:
                end = args.steps
                if fit_mark is None:
                    if now - t_start >= FIT_WARMUP * 60.0 * args.minutes:
                        fit_mark = (now, step)
                else:
                    end = fitted_end(step, steps_cap, (step - fit_mark[1]) / (now - fit_mark[0]),
                                     deadline - now)
                if world > 1:                       # every process ends at the same step
                    t = torch.tensor([float(end)], device=device)
                    torch.distributed.all_reduce(t, op=torch.distributed.ReduceOp.MIN)
                    end = int(t.item())
                args.steps = end
                progress.set_total(end)
            progress.update(step, lambda: f"loss {loss.item():.4f} lr {lr:.4g} {speed:.0f} pos/s")
            out_of_time = deadline is not None and time.time() >= deadline
            if deadline is not None and world > 1:      # every process stops at the same step
                flag = torch.tensor([float(out_of_time)], device=device)
                torch.distributed.all_reduce(flag, op=torch.distributed.ReduceOp.MAX)
                out_of_time = bool(flag.item())
            out_of_time = out_of_time or terminated[0]
            evaluate_now = step % args.eval_every == 0 or step == args.steps or out_of_time
            if evaluate_now or (args.checkpoint_every and step % args.checkpoint_every == 0):
                train_loss = None
                if loss_n:
                    t = loss_sum.clone()
                    if world > 1:
                        torch.distributed.all_reduce(t)
                        t /= world
                    train_loss = float(t) / loss_n
                    if not math.isfinite(train_loss):
                        raise TrainError(f"the loss diverged ({train_loss}) before step {step}: "
                                         f"lower --lr")
                if is_main:
                    checkpoint_and_log(run_eval(train_loss) if evaluate_now else None)
                if evaluate_now:
                    loss_sum.zero_()
                    loss_n = 0
                if world > 1:
                    torch.distributed.barrier()
            if out_of_time:
                why = "SIGTERM" if terminated[0] else f"--minutes {args.minutes:g} spent"
                progress.write(f"{why} at step {step}: stopped (continue with --resume)")
                break
    progress.close()
    del it
    if world > 1:
        torch.distributed.destroy_process_group()
    elapsed = time.time() - t_start
    return {"step": step, "rows": rows, "seconds": elapsed}


@contextlib.contextmanager
def _sigterm_stops(enabled: bool):
    """A flag that SIGTERM sets while the block runs: the run then stops at
    the next step boundary, evaluated and checkpointed, as --minutes does.
    (A run started in the background with ``nohup ... &`` ignores SIGINT,
    so ``kill PID`` is how one stops it.)  Only for a one-process run in
    the main thread: processes of a distributed run would stop at
    different steps."""
    flag = [False]
    if not enabled or threading.current_thread() is not threading.main_thread():
        yield flag
        return

    def handler(signum, frame) -> None:
        flag[0] = True

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield flag
    finally:
        signal.signal(signal.SIGTERM, previous)


def masked_cross_entropy(logits: torch.Tensor, y: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """Cross-entropy over the legal points only (Clark & Storkey's masked
    training): the LEGAL plane of ``x`` masks the others out of the softmax."""
    return F.cross_entropy(logits.masked_fill(~legal_mask(x, logits.shape[1]), -1e4), y)


def policy_value_loss(out, y, v, value_weight: float, own=None,
                      ownership_weight: float = 1.0) -> torch.Tensor:
    """A value net's loss: the policy's cross-entropy plus ``value_weight``
    times the value's binary cross-entropy of the winner, averaged over the
    positions whose game result counts (``v``: value_targets' columns);
    with ``own`` (targets, weights: :class:`nets.ownership.OwnerTargets`)
    plus ``ownership_weight`` times the ownership head's per-point
    cross-entropy, averaged over the labelled games' positions."""
    logits, value, own_logits = out
    weight = v[:, 1]
    bce = F.binary_cross_entropy_with_logits(value.float(), v[:, 0], reduction="none")
    value_loss = (bce * weight).sum() / weight.sum().clamp(min=1.0)
    loss = F.cross_entropy(logits.float(), y) + value_weight * value_loss
    if own is not None:
        loss = loss + ownership_weight * O.masked_loss(own_logits, *own)
    return loss


#: architectures whose training step is faster with channels-last activations
#: (python -m bench.training --memory-formats: on a CPU, res6 +44%, res6v +38% on an
#: Intel Xeon with AMX in bf16, the plain convolution stack maddison12 23% slower;
#: on an H200 in bf16 at batch 512, res6v's step without the batch +50%, 37,271
#: positions/s against 24,894, 2026-11-27)
CHANNELS_LAST_ARCHS = ("res", "res_ownership", "res_value")


def pick_memory_format(spec: str, config: dict, device: torch.device) -> torch.memory_format:
    """``--memory-format``: auto is channels_last for CHANNELS_LAST_ARCHS on a
    CPU or a CUDA GPU, contiguous elsewhere (other architectures have not
    been measured faster with it on a GPU)."""
    if spec == "auto":
        fast = device.type in ("cpu", "cuda") and config.get("arch") in CHANNELS_LAST_ARCHS
        spec = "channels_last" if fast else "contiguous"
    return torch.channels_last if spec == "channels_last" else torch.contiguous_format


def own_rows(own) -> torch.Tensor:
    """The rows of a batch whose ownership the value net computes in
    training: those of labelled games (weight 1 in ``own``, the (targets,
    weights) of :class:`nets.ownership.OwnerTargets`), or row 0 (weight 0)
    when there is none, so that the head's gradient is defined, zero, as it
    was when the head ran on every row; none without ``own``.  The loss and
    the gradients are those of the whole batch: the other rows weigh 0."""
    if own is None:
        return torch.zeros(0, dtype=torch.long)
    rows = torch.nonzero(torch.as_tensor(own[1]) > 0).flatten()
    return rows if len(rows) else torch.zeros(1, dtype=torch.long)


def train_step(net, opt, x, y, c, device, autocast,
               loss_fn=lambda logits, y, x: F.cross_entropy(logits, y),
               clip: float | None = None, v: torch.Tensor | None = None,
               memory_format: torch.memory_format = torch.contiguous_format,
               marks: list[float] | None = None, own=None, next_moves: int = 0,
               next_weight: float = 1.0) -> torch.Tensor:
    """One optimiser step on a batch (x uint8 planes, y targets: moves for
    the policy, owners for the ownership net; c colours; v a value net's
    targets, whose third column is the komi; ``own`` its ownership targets
    and their weights, passed on to ``loss_fn`` when given); returns the loss
    ``loss_fn(logits, y, x)`` (``loss_fn(outputs, y, x, v)`` with v) as a
    tensor (reading it would wait for the device).  With ``next_moves`` k (a
    net with that head) y is (b, 1 + k), the move played and the k after
    it: the later moves' cross-entropies, each weighted ``next_weight``,
    are added to the loss.  ``clip`` caps the
    gradient's global L2 norm.  ``marks``: the clock is read
    after the forward pass and loss, the backward pass, the clipping and
    the optimiser step (``bench.training --profile``; on a GPU each mark
    waits for the device first)."""

    def mark() -> None:
        if marks is not None:
            if device.type == "cuda":
                torch.cuda.synchronize(device)
            marks.append(time.perf_counter())
    x = x.to(device, non_blocking=True)     # uint8 planes, then float32 in one copy
    x = torch.empty(x.shape, device=device, memory_format=memory_format).copy_(x)
    y = y.to(device, non_blocking=True)
    c = c.to(device, non_blocking=True)
    later = next_moves > 0
    if later:
        y, y_next = y[:, 0], y[:, 1:]
    if v is None:
        with autocast():
            out = net(x, c, next_moves=True) if later else net(x, c)
        if later:
            out, next_logits = out
        loss = loss_fn(out.float(), y, x)
    else:
        v = v.to(device, non_blocking=True)
        rows = own_rows(own)
        with autocast():
            out = net(x, c, v[:, 2], next_moves=later, own_rows=rows.to(device, non_blocking=True))
        if later:
            out, next_logits = out[:3], out[3]
        if own is None:
            loss = loss_fn(out, y, x, v)
        else:
            loss = loss_fn(out, y, x, v, tuple(t[rows].to(device, non_blocking=True) for t in own))
    if later:
        loss = loss + next_weight * next_moves_loss(next_logits, y_next)
    mark()
    opt.zero_grad(set_to_none=True)
    loss.backward()
    mark()
    if clip is not None:
        torch.nn.utils.clip_grad_norm_(net.parameters(), clip)
    mark()
    opt.step()
    mark()
    return loss


def next_moves_loss(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """The sum over the k later moves of each one's mean cross-entropy:
    logits (b, k, n * n), targets (b, k) with D.IGNORE where the game ended
    or passed (such a move counts nothing; a move no position of the batch
    has counts 0)."""
    logits = logits.float()
    total = logits.new_zeros(())
    for j in range(targets.shape[1]):
        t = targets[:, j]
        n = (t != D.IGNORE).sum()
        part = F.cross_entropy(logits[:, j], t, ignore_index=D.IGNORE, reduction="sum")
        total = total + part / n.clamp(min=1)
    return total


def plot_compare(runs: list[tuple[str, list[dict]]], path: Path,
                 metrics: list[Path]) -> bool:
    """Several runs' validation loss and top-1 against the step, one line
    each (e.g. two memory layouts of one schedule: the same accuracy per
    position seen); False (with one message) when matplotlib is missing.
    ``metrics``: the files the runs came from, for that message."""
    plt = _pyplot(path, ", ".join(map(str, metrics)))
    if plt is None:
        return False
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    for label, rows in runs:
        steps = [r["step"] for r in rows]
        a.plot(steps, [r["val_loss"] for r in rows], marker=".", label=label)
        b.plot(steps, [r.get("top1") for r in rows], marker=".", label=label)
    a.set_xlabel("step")
    a.set_ylabel("validation loss")
    b.set_xlabel("step")
    b.set_ylabel("validation top-1")
    for ax in (a, b):
        ax.legend()
    _save_figure(plt, fig, path)
    return True


def plot_main(argv: list[str]) -> int:
    """``--plot METRICS.jsonl [METRICS.jsonl ...] OUT.png``: redraw the
    curves of a run, or compare several runs on one plot (each named by
    its folder)."""
    ap = argparse.ArgumentParser(prog="python -m nets.train --plot",
                                 description="Draw the curves of metrics.jsonl files.")
    ap.add_argument("metrics", nargs="+",
                    help="metrics file(s) of runs (one JSON object a line)")
    ap.add_argument("png", help="PNG file to write")
    args = ap.parse_args(argv)
    runs = []
    for name in args.metrics:
        metrics = Path(name)
        rows = read_metrics(metrics)
        if not rows:
            print(f"error: no metrics in {metrics} (missing or empty file)", file=sys.stderr)
            return 2
        runs.append((metrics.parent.name or metrics.stem, rows))
    if len(runs) > 1:
        if not plot_compare(runs, Path(args.png), [Path(m) for m in args.metrics]):
            return 2
        print(f"{args.png}: {len(runs)} runs, "
              + ", ".join(f"{label} {len(rows)} evaluations" for label, rows in runs))
        return 0
    rows = runs[0][1]
    if not plot_curves(rows, Path(args.png), metrics=Path(args.metrics[0])):
        return 2
    print(f"{args.png}: {len(rows)} evaluations, steps {rows[0]['step']}..{rows[-1]['step']}")
    return 0


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["--plot"]:
        return plot_main(argv[1:])
    args = parse_args(argv)
    try:
        result = train(args)
    except (TrainError, D.DataError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted: resume with --resume", file=sys.stderr)
        return 130
    rows = result["rows"]
    if rows and distributed()[0] == 0:
        r = rows[-1]
        accs = ", ".join(f"{k} {r[k]:.4f}" for k in ACCURACY_KEYS if r.get(k) is not None)
        print(f"done: step {result['step']}, val {accs}; {args.out}/best.pt")
    return 0


if __name__ == "__main__":
    sys.exit(main())
