"""The policy network as the engine sees it: numpy planes in, move
probabilities out, on the GPU when there is one and on the CPU otherwise,
with the same interface.

The engine never imports torch; the composition root (engine/gtp.py) builds
a :class:`PolicyEvaluator` and hands it to the player and to the prior
worker (nets/worker.py), which only call :meth:`PolicyEvaluator.evaluate`.
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import torch

from engine.features import N_PLANES
from nets.checkpoint import load_model
from nets.models import OwnershipView, legal_mask
from nets.precision import autocast, resolve as resolve_precision

#: The network ``make play`` and ``python -m engine.gtp`` use by default.
DEFAULT_WEIGHTS = Path(__file__).resolve().parent / "weights" / "res6v.pt"
#: The ownership network they use by default (nets/ownership.py).
DEFAULT_OWNERSHIP = Path(__file__).resolve().parent / "weights" / "res6own.pt"


def pick_device(device: str = "auto") -> torch.device:
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    dev = torch.device(device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {device!r} asked for, but CUDA is not available")
    return dev


class PolicyEvaluator:
    """A loaded policy network.

    ``evaluate(planes, colors)``: planes (batch, N_PLANES, n, n) of any
    numeric dtype (the engine writes uint8), colors (batch,) engine colours
    (1 black, 2 white) of the player to move.  Returns (batch, n * n) float32
    probabilities, softmax over the points the LEGAL plane marks (others 0),
    point ``i * n + j`` = row ``i`` from the top, column ``j``; a network
    with a pass output (``passes``) adds the pass's as column n * n.

    On CUDA the input goes through a pinned host buffer.  ``precision``
    (auto, fp32, bf16; nets/precision.py) picks bf16 autocast where the GPU
    or the CPU is fast at it, float32 elsewhere; ``precision_reason`` says
    why, for the log.  On the CPU the network uses ``threads`` intra-op
    threads (None: torch's default).  Calls are serialised by a lock, so the
    GTP thread (policy-only moves, root evaluations) and the prior worker
    may share one evaluator.
    """

    #: what the checkpoint's model must have learnt (its config's ``task``)
    task = "policy"

    def __init__(self, path: str | Path = DEFAULT_WEIGHTS, device: str = "auto",
                 threads: int | None = None, precision: str = "auto"):
        self.path = str(path)
        self.device = pick_device(device)
        self.precision, self.precision_reason = resolve_precision(precision, self.device)
        if self.device.type == "cpu" and threads is not None:
            torch.set_num_threads(max(1, int(threads)))
        model, self.metadata = load_model(self.path, self.device)
        if self.task == "ownership" and getattr(model, "has_value", False):
            model = OwnershipView(model)        # a value net's ownership head
        task = model.config.get("task", "policy")
        if task != self.task:
            a = {"policy": "a policy", "ownership": "an ownership"}
            raise ValueError(f"{self.path} holds {a.get(task, repr(task))} network, not "
                             f"{a[self.task]} network")
        self.model = model.for_inference()
        cfg = self.model.config
        self.min_size, self.max_size = int(cfg["min_size"]), int(cfg["max_size"])
        self.passes = bool(getattr(self.model, "has_pass", False))
        #: a value head: evaluate_value gives the probability that the player to move wins
        self.has_value = bool(getattr(self.model, "has_value", False))
        self.name = str(self.metadata.get("model", cfg.get("name", "policy")))
        self._lock = threading.Lock()
        self._pinned: torch.Tensor | None = None

    def supports(self, size: int) -> bool:
        return self.min_size <= size <= self.max_size

    def _input(self, planes: np.ndarray) -> torch.Tensor:
        x = torch.from_numpy(np.ascontiguousarray(planes))
        if self.device.type != "cuda":
            return x.float()
        if self._pinned is None or self._pinned.shape[0] < x.shape[0] \
                or self._pinned.shape[1:] != x.shape[1:] or self._pinned.dtype != x.dtype:
            self._pinned = torch.empty(x.shape, dtype=x.dtype).pin_memory()
        buf = self._pinned[:x.shape[0]]
        buf.copy_(x)
        return buf.to(self.device, non_blocking=True).float()

    def _forward(self, planes: np.ndarray, colors: np.ndarray, komi: float | None = None):
        """(input x, the model's output) for planes (batch, N_PLANES, n, n)
        and engine colours (1 black, 2 white); with ``komi`` a value net's
        three heads.  Called under the lock and in inference mode."""
        if planes.ndim != 4 or planes.shape[1] != N_PLANES or planes.shape[2] != planes.shape[3]:
            raise ValueError(f"expected planes (batch, {N_PLANES}, n, n), got {planes.shape}")
        b = planes.shape[0]
        col = torch.as_tensor(np.asarray(colors, np.int64).reshape(b) - 1).to(self.device)
        x = self._input(planes)
        with autocast(self.device, self.precision):
            out = self.model(x, col) if komi is None else self.model(x, col, float(komi))
        return x, out

    @staticmethod
    def _probabilities(x: torch.Tensor, logits: torch.Tensor) -> np.ndarray:
        """Softmax over the legal moves (0 elsewhere, and everywhere in a
        row with no legal move)."""
        logits = logits.float().masked_fill(~legal_mask(x, logits.shape[1]), float("-inf"))
        return torch.nan_to_num(torch.softmax(logits, dim=-1), nan=0.0).cpu().numpy()

    def evaluate(self, planes: np.ndarray, colors: np.ndarray) -> np.ndarray:
        with self._lock, torch.inference_mode():
            x, logits = self._forward(planes, colors)
            return self._probabilities(x, logits)

    def evaluate_value(self, planes: np.ndarray, colors: np.ndarray,
                       komi: float) -> tuple[np.ndarray, np.ndarray]:
        """One forward pass of a network with a value head (``has_value``):
        ``evaluate``'s probabilities and (batch,) float32 probabilities that
        the player to move wins with ``komi`` (points given to white)."""
        if not self.has_value:
            raise ValueError(f"{self.path} has no value head")
        with self._lock, torch.inference_mode():
            x, (logits, value, _) = self._forward(planes, colors, komi)
            return self._probabilities(x, logits), torch.sigmoid(value.float()).cpu().numpy()


class OwnershipEvaluator(PolicyEvaluator):
    """A loaded ownership network (nets/ownership.py): ``evaluate(planes,
    colors)`` returns (batch, n * n) float32 probabilities that the player
    to move owns each point at the end of the game."""

    task = "ownership"

    def evaluate(self, planes: np.ndarray, colors: np.ndarray) -> np.ndarray:
        with self._lock, torch.inference_mode():
            _, logits = self._forward(planes, colors)
            return torch.sigmoid(logits.float()).cpu().numpy()


__all__ = ["DEFAULT_WEIGHTS", "DEFAULT_OWNERSHIP", "PolicyEvaluator", "OwnershipEvaluator",
           "pick_device"]
