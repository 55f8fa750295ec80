"""Checkpoint files: weights plus metadata.

A checkpoint is ``torch.save`` of a plain dict, loadable with
``torch.load(weights_only=True)`` (no pickled classes)::

    {
      "format":     "delayed-go-net",      # FORMAT
      "version":    1,                     # FORMAT_VERSION
      "metadata":   "<JSON text>",         # see below
      "weights":    {name: tensor},        # model.state_dict()
      "optimizer":  optimizer.state_dict() or absent,
      "ema":        {name: tensor} or absent,  # the weights' moving average
    }

The metadata (a JSON object, kept as text so that anything in it stays
JSON-able) always carries ``model`` (registry name), ``config`` (the full
model config), ``feature_version`` and ``n_planes`` (of engine.features when
saved), and may carry ``board_sizes``, ``data`` (training data summary),
``accuracy`` (measured, e.g. ``{"top1": .., "top5": .., "top10": ..}``),
``steps`` and anything else the trainer wants (``train_state``).

Loading checks the format tag and the feature version; every failure is a
ValueError that names the file.
"""

from __future__ import annotations

import json
import os
import pickle
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import torch

from engine.features import FEATURE_VERSION, N_PLANES
from nets.models import model_from_config

FORMAT = "delayed-go-net"
FORMAT_VERSION = 1


@dataclass
class Checkpoint:
    path: str
    metadata: dict
    weights: dict
    optimizer: dict | None = field(default=None)
    ema: dict | None = field(default=None)      # the run's exponential moving average

    def build_model(self, device="cpu") -> torch.nn.Module:
        """The model of this checkpoint with its weights, in eval mode."""
        model = model_from_config(self.metadata["config"])
        try:
            model.load_state_dict(self.weights)
        except RuntimeError as e:
            raise ValueError(f"checkpoint {self.path}: weights do not fit model "
                             f"{self.metadata.get('model')!r}: {e}") from None
        return model.to(device).eval()


def _unwrap(model: torch.nn.Module) -> torch.nn.Module:
    """The module inside DistributedDataParallel / torch.compile wrappers."""
    while True:
        inner = getattr(model, "module", None) or getattr(model, "_orig_mod", None)
        if inner is None:
            return model
        model = inner


def save_checkpoint(path, model: torch.nn.Module, *, metadata: dict | None = None,
                    optimizer: torch.optim.Optimizer | None = None,
                    ema: torch.nn.Module | None = None) -> Path:
    """Write the checkpoint atomically (a temporary file renamed over
    ``path``).  ``metadata`` is merged over the mandatory keys taken from
    the model; it must be JSON-able.  ``ema``: a model of the same
    architecture holding the moving average of the weights (nets.train
    --ema), kept beside them."""
    path = Path(path)
    model = _unwrap(model)
    config = dict(getattr(model, "config", {}))
    meta = {
        "model": config.get("name"),
        "config": config,
        "feature_version": FEATURE_VERSION,
        "n_planes": N_PLANES,
    }
    meta.update(metadata or {})
    try:
        text = json.dumps(meta, sort_keys=True)
    except (TypeError, ValueError) as e:
        raise ValueError(f"checkpoint metadata for {path} is not JSON-able: {e}") from None
    blob = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "metadata": text,
        "weights": {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()},
    }
    if optimizer is not None:
        blob["optimizer"] = optimizer.state_dict()
    if ema is not None:
        blob["ema"] = {k: v.detach().cpu().contiguous() for k, v in ema.state_dict().items()}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    torch.save(blob, tmp)
    os.replace(tmp, path)
    return path


def load_checkpoint(path, *, map_location="cpu", check_features: bool = True) -> Checkpoint:
    """Read and check a checkpoint.  ValueError (naming the file) for a
    missing, truncated or foreign file, or a feature-version mismatch."""
    path = str(path)
    if not os.path.isfile(path):
        raise ValueError(f"checkpoint file {path} does not exist")
    try:
        blob = torch.load(path, map_location=map_location, weights_only=True)
    except (RuntimeError, pickle.UnpicklingError, EOFError, zipfile.BadZipFile,
            OSError, ValueError, AttributeError, TypeError, KeyError, IndexError) as e:
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise ValueError(f"cannot read checkpoint {path}: truncated, corrupt or not a "
                         f"checkpoint of this program ({first})") from None
    if not isinstance(blob, dict) or blob.get("format") != FORMAT:
        raise ValueError(f"{path} is not a {FORMAT} checkpoint (foreign file)")
    if blob.get("version") != FORMAT_VERSION:
        raise ValueError(f"checkpoint {path} has format version {blob.get('version')}, "
                         f"this program reads {FORMAT_VERSION}")
    try:
        meta = json.loads(blob["metadata"])
        weights = blob["weights"]
        ema = blob.get("ema")
        if not isinstance(meta, dict) or not isinstance(weights, dict) \
                or not all(torch.is_tensor(v) for v in weights.values()) \
                or not (ema is None or (isinstance(ema, dict)
                                        and all(torch.is_tensor(v) for v in ema.values()))):
            raise TypeError("bad layout")
        meta["config"]["arch"]
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"checkpoint {path} is damaged: {e}") from None
    if check_features and (meta.get("feature_version") != FEATURE_VERSION
                           or meta.get("n_planes") != N_PLANES):
        raise ValueError(
            f"checkpoint {path} was trained on input features version "
            f"{meta.get('feature_version')} ({meta.get('n_planes')} planes); this engine "
            f"computes version {FEATURE_VERSION} ({N_PLANES} planes): retrain or convert it")
    planes = meta["config"].get("in_planes", N_PLANES)
    if check_features and planes != N_PLANES:
        raise ValueError(f"checkpoint {path} holds a model of {planes} input planes; this "
                         f"engine computes {N_PLANES}")
    return Checkpoint(path, meta, weights, blob.get("optimizer"), ema)


def load_model(path, device="cpu") -> tuple[torch.nn.Module, dict]:
    """(model in eval mode, metadata) from a checkpoint file."""
    ck = load_checkpoint(path)
    return ck.build_model(device), ck.metadata


def weights_only(src, dst, use_ema: bool = False) -> Path:
    """Copy the checkpoint ``src`` to ``dst`` without its optimizer state
    (weights and metadata only: a third of an Adam checkpoint's size, what
    ships under nets/weights/ and what a size limit lets through).  A run
    resumed from it goes on at its step and schedule with a fresh optimizer.
    ``use_ema``: ship the moving average of the weights instead (its
    measured accuracy, the ``ema_`` keys, becomes the checkpoint's); the
    run resumed from it goes on from those weights."""
    ck = load_checkpoint(src)
    if not use_ema:
        return save_checkpoint(dst, ck.build_model(), metadata=ck.metadata)
    if ck.ema is None:
        raise ValueError(f"checkpoint {src} holds no moving average (train with --ema)")
    meta = dict(ck.metadata)
    accuracy = meta.get("accuracy") or {}
    meta["accuracy"] = {k[4:]: v for k, v in accuracy.items() if k.startswith("ema_")}
    if "step" in accuracy:
        meta["accuracy"]["step"] = accuracy["step"]
    meta["weights"] = "ema"
    return save_checkpoint(dst, Checkpoint(ck.path, meta, ck.ema).build_model(), metadata=meta)


def average(sources, dst, use_ema: bool = False) -> Path:
    """Write to ``dst`` the mean of the weights of the checkpoints
    ``sources`` (a model soup, or the average of cycles' ends as in
    stochastic weight averaging): every floating tensor, the batch norms'
    running statistics included, averaged with equal weight; counters are
    the last source's.  The sources must be one architecture trained nearby
    (a run and the checkpoint it went on from): the mean of unrelated nets
    predicts nothing.  ``use_ema``: a source's moving average where it holds
    one.  The metadata is the last source's, its step included, with no
    accuracy (the average's own must be measured) and the sources named
    under ``averaged``.  ValueError, naming the file, for fewer than two
    sources or one of another model."""
    if len(sources) < 2:
        raise ValueError("averaging needs at least two checkpoints")
    cks = [load_checkpoint(s) for s in sources]
    first = cks[0]
    for ck in cks[1:]:
        if ck.metadata.get("model") != first.metadata.get("model") \
                or {k: v.shape for k, v in ck.weights.items()} \
                != {k: v.shape for k, v in first.weights.items()}:
            raise ValueError(f"checkpoint {ck.path} is not the model of {first.path} "
                             f"({ck.metadata.get('model')!r} against "
                             f"{first.metadata.get('model')!r}, or other shapes): "
                             f"only one architecture's weights average")
    tensors = [ck.ema if use_ema and ck.ema is not None else ck.weights for ck in cks]
    mean = {}
    for name, last in tensors[-1].items():
        if last.is_floating_point():
            mean[name] = (sum(t[name].double() for t in tensors) / len(tensors)).to(last.dtype)
        else:
            mean[name] = last
    meta = dict(cks[-1].metadata)
    meta["accuracy"] = {}
    meta["averaged"] = [f"{ck.path} ({'moving average' if t is ck.ema else 'weights'})"
                        for ck, t in zip(cks, tensors)]
    meta.pop("weights", None)
    return save_checkpoint(dst, Checkpoint(cks[-1].path, meta, mean).build_model(),
                           metadata=meta)


def main(argv=None) -> int:
    import argparse
    import sys
    ap = argparse.ArgumentParser(prog="python -m nets.checkpoint",
                                 description="Checkpoint files: weights plus metadata.")
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("weights-only", help="copy a checkpoint without its optimizer state")
    w.add_argument("src")
    w.add_argument("dst")
    w.add_argument("--ema", action="store_true",
                   help="ship the moving average of the weights (a run trained with --ema)")
    a = sub.add_parser("average", help="the mean of checkpoints' weights (one architecture, "
                                        "trained nearby), without optimizer state")
    a.add_argument("dst")
    a.add_argument("src", nargs="+")
    a.add_argument("--ema", action="store_true",
                   help="take each source's moving average where it holds one")
    args = ap.parse_args(argv)
    try:
        if args.cmd == "average":
            path = average(args.src, args.dst, args.ema)
        else:
            path = weights_only(args.src, args.dst, args.ema)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB)")
    return 0


__all__ = ["FORMAT", "FORMAT_VERSION", "Checkpoint", "save_checkpoint", "load_checkpoint",
           "load_model", "weights_only", "average"]


if __name__ == "__main__":
    raise SystemExit(main())
