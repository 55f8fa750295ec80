"""The policy network as the engine sees it: numpy planes in, move
probabilities out, on the GPU when there is one and on the CPU otherwise,
with the same interface.

The engine never imports torch; the composition root (engine/gtp.py) builds
a :class:`PolicyEvaluator` and hands it to the player and to the prior
worker (nets/worker.py), which only call :meth:`PolicyEvaluator.evaluate`.
"""

from __future__ import annotations

import logging
import threading
import warnings
from pathlib import Path

import numpy as np
import torch

from engine.features import LEGAL, N_PLANES
from nets.checkpoint import load_model
from nets.models import OwnershipView, legal_mask
from nets.precision import autocast, resolve as resolve_precision

log = logging.getLogger("engine")

# The traced forward pass (PolicyEvaluator._trace): TorchScript's notes that it
# is deprecated, and the tracer's on the models' input checks (constants in a
# trace of one board size, which is what the evaluator makes), say nothing a
# user can act on.  Filters, not warnings.catch_warnings, which is not
# thread-safe (the prior worker traces).
warnings.filterwarnings("ignore", message=r"`torch\.jit\.\w+` is deprecated",
                        category=DeprecationWarning)
warnings.filterwarnings("ignore", category=torch.jit.TracerWarning, module=r"nets\.")

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
    threads (None: torch's default) and keeps its activations channels-last
    (``memory_format``: auto, channels_last, contiguous; auto is
    channels-last on a CPU, where the networks measured evaluate 1.1-1.9x
    faster so, contiguous on CUDA).  On a CPU in bf16 the forward pass runs
    as a frozen TorchScript trace, one per (board size, heads), made on
    first use and checked against the eager pass (the same answers, 13%
    more rollouts a second beside one search thread); it runs eagerly in
    float32, where the trace was 5-15% slower, and wherever tracing fails
    (logged: TorchScript is deprecated in torch 2.13, the pinned version,
    and a later torch without it costs speed only).  Calls are serialised
    by a lock, so the GTP thread (policy-only moves, root evaluations) and
    the prior worker may share one evaluator.
    """

    #: what the checkpoint's model must have learnt (its config's ``task``)
    task = "policy"

    def __init__(self, path: str | Path = DEFAULT_WEIGHTS, device: str = "auto",
                 threads: int | None = None, precision: str = "auto",
                 cuda_graphs: bool = True, memory_format: str = "auto"):
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
        if memory_format not in ("auto", "channels_last", "contiguous"):
            raise ValueError(f"memory format {memory_format!r}: auto, channels_last or contiguous")
        if memory_format == "auto":
            memory_format = "channels_last" if self.device.type == "cpu" else "contiguous"
        #: the activations' layout: torch.channels_last or torch.contiguous_format
        self.memory_format = (torch.channels_last if memory_format == "channels_last"
                              else torch.contiguous_format)
        self.model.to(memory_format=self.memory_format)
        cfg = self.model.config
        self.min_size, self.max_size = int(cfg["min_size"]), int(cfg["max_size"])
        self.passes = bool(getattr(self.model, "has_pass", False))
        #: a value head: evaluate_value gives the probability that the player to move wins
        self.has_value = bool(getattr(self.model, "has_value", False))
        self.name = str(self.metadata.get("model", cfg.get("name", "policy")))
        self._lock = threading.Lock()
        self._pinned: torch.Tensor | None = None
        self._graphs = _Graphs(self) if cuda_graphs and self.device.type == "cuda" else None
        #: (board size, value head, precision) -> the traced forward pass, or None (eager)
        self._traced: dict[tuple[int, bool, str], torch.jit.ScriptModule | None] = {}

    def supports(self, size: int) -> bool:
        return self.min_size <= size <= self.max_size

    @property
    def cuda_graphs(self) -> bool:
        """Whether batches run as CUDA graphs (on CUDA, asked for, and no
        capture has failed)."""
        return self._graphs is not None and self._graphs.usable

    def warm(self, size: int, batch: int) -> None:
        """Make now what batches of up to ``batch`` positions of a ``size``
        board will run, so that no search waits for it: on a CPU the traced
        forward passes (both heads' where there is a value head), on CUDA
        the graphs (the heads the prior worker asks for)."""
        if not self.supports(size):
            return
        if self._traces:
            with self._lock:
                for value in {False, self.has_value}:
                    self._trace(size, value)
            return
        if not self.cuda_graphs:
            return
        x = np.zeros((batch, N_PLANES, size, size), np.uint8)
        x[:, LEGAL] = 1
        colors = np.ones(batch, np.int32)
        k = 1
        while True:
            if self.has_value:
                self.evaluate_value(x[:k], colors[:k], 7.5)
            else:
                self.evaluate(x[:k], colors[:k])
            if k >= batch:
                break
            k = min(2 * k, batch)

    def _host(self, planes: np.ndarray) -> torch.Tensor:
        """The planes in the pinned host buffer (CUDA), ready for a
        non-blocking copy to the device."""
        x = torch.from_numpy(np.ascontiguousarray(planes))
        if self._pinned is None or self._pinned.shape[0] < x.shape[0] \
                or self._pinned.shape[1:] != x.shape[1:] or self._pinned.dtype != x.dtype:
            self._pinned = torch.empty(x.shape, dtype=x.dtype).pin_memory()
        buf = self._pinned[:x.shape[0]]
        buf.copy_(x)
        return buf

    def _input(self, planes: np.ndarray) -> torch.Tensor:
        if self.device.type != "cuda":
            x = torch.from_numpy(np.ascontiguousarray(planes)).float()
        else:
            x = self._host(planes).to(self.device, non_blocking=True).float()
        return x.contiguous(memory_format=self.memory_format)

    @staticmethod
    def _check(planes: np.ndarray) -> None:
        if planes.ndim != 4 or planes.shape[1] != N_PLANES or planes.shape[2] != planes.shape[3]:
            raise ValueError(f"expected planes (batch, {N_PLANES}, n, n), got {planes.shape}")

    def _tensors(self, planes: np.ndarray, colors: np.ndarray):
        """(input x as float, colour indices) on the device for planes
        (batch, N_PLANES, n, n) and engine colours (1 black, 2 white)."""
        self._check(planes)
        b = planes.shape[0]
        col = torch.as_tensor(np.asarray(colors, np.int64).reshape(b) - 1).to(self.device)
        return self._input(planes), col

    @staticmethod
    def _softmax(x: torch.Tensor, logits: torch.Tensor) -> torch.Tensor:
        """Softmax over the legal moves (0 elsewhere, and everywhere in a
        row with no legal move), on the network's device."""
        logits = logits.float().masked_fill(~legal_mask(x, logits.shape[1]), float("-inf"))
        return torch.nan_to_num(torch.softmax(logits, dim=-1), nan=0.0)

    def _heads(self, x: torch.Tensor, col: torch.Tensor, komi,
               capture: bool = False) -> tuple[torch.Tensor, ...]:
        """(probabilities,) or, with ``komi``, (probabilities, values): the
        tensors ``evaluate`` and ``evaluate_value`` return, for input x
        (float) and colour indices col (0 black, 1 white); ``capture``
        while a CUDA graph records them."""
        traced = self._trace(x.shape[-1], komi is not None) if self._traces else None
        if traced is not None:
            out = traced(x, col, torch.full((x.shape[0],), 0.0 if komi is None else komi))
        else:
            with autocast(self.device, self.precision, cache=not capture):
                out = self.model(x, col) if komi is None else self.model.policy_value(x, col, komi)
        if komi is None:
            return (self._softmax(x, out),)
        logits, value = out
        return self._softmax(x, logits), torch.sigmoid(value.float())

    @property
    def _traces(self) -> bool:
        """Whether the forward pass runs traced: on a CPU, in bf16."""
        return self.device.type == "cpu" and self.precision == "bf16"

    def _trace(self, n: int, value: bool) -> torch.jit.ScriptModule | None:
        """The frozen trace of the forward pass on n x n boards (made on
        first use), or None where tracing failed or its answers differ from
        the eager pass's on a sample batch; the caller then runs eagerly.
        Freezing folds autocast's casts of the weights, made anew at every
        eager call, and the trace drops the modules' Python dispatch: the
        arithmetic is the same."""
        key = (n, value, self.precision)
        if key in self._traced:
            return self._traced[key]
        forward = _Forward(self.model, self.device, self.precision, value).eval()
        gen = torch.Generator().manual_seed(n)
        x = (torch.rand((3, N_PLANES, n, n), generator=gen) < 0.3).float()
        x = x.contiguous(memory_format=self.memory_format)
        sample = (x, torch.tensor([0, 1, 0]), torch.tensor([7.5, 0.5, -3.0]))
        traced = None
        try:
            with torch.inference_mode(False), torch.no_grad():
                traced = torch.jit.freeze(torch.jit.trace(forward, sample, check_trace=False))
                got, want = traced(*sample), forward(*sample)
            got, want = (got, want) if value else ((got,), (want,))
            if any(not torch.allclose(a, b, atol=1e-3) for a, b in zip(got, want)):
                raise ValueError("its answers differ from the eager pass's")
        except Exception as e:      # noqa: BLE001 - any failure means: run eagerly
            log.info("network %s: no traced forward pass on %dx%d (%s: %s); eager", self.name,
                     n, n, type(e).__name__, e)
            traced = None
        self._traced[key] = traced
        return traced

    def _run(self, planes: np.ndarray, colors: np.ndarray, komi=None) -> list[np.ndarray]:
        """The heads' numpy arrays for a batch (under the lock)."""
        if self.cuda_graphs:
            out = self._graphs.run(planes, colors, komi)
            if out is not None:
                return out
        x, col = self._tensors(planes, colors)
        k = None if komi is None else float(komi)
        return [t.cpu().numpy() for t in self._heads(x, col, k)]

    def evaluate(self, planes: np.ndarray, colors: np.ndarray) -> np.ndarray:
        self._check(planes)
        with self._lock, torch.inference_mode():
            return self._run(planes, colors)[0]

    def evaluate_value(self, planes: np.ndarray, colors: np.ndarray,
                       komi: float) -> tuple[np.ndarray, np.ndarray]:
        """One forward pass of a network with a value head (``has_value``):
        ``evaluate``'s probabilities and (batch,) float32 probabilities that
        the player to move wins with ``komi`` (points given to white)."""
        if not self.has_value:
            raise ValueError(f"{self.path} has no value head")
        self._check(planes)
        with self._lock, torch.inference_mode():
            probs, values = self._run(planes, colors, komi)
            return probs, values


class _Forward(torch.nn.Module):
    """The network's raw outputs as the evaluator needs them, in its
    precision: the policy logits, and with ``value`` the value logit too
    (komi is then an input), as float32 (what :meth:`PolicyEvaluator._trace`
    traces)."""

    def __init__(self, model: torch.nn.Module, device: torch.device, precision: str,
                 value: bool):
        super().__init__()
        self.model, self.device, self.precision, self.value = model, device, precision, value

    def forward(self, x: torch.Tensor, col: torch.Tensor, komi: torch.Tensor):
        with autocast(self.device, self.precision):
            if not self.value:
                return self.model(x, col).float()
            logits, value = self.model.policy_value(x, col, komi)
        return logits.float(), value.float()


class OwnershipEvaluator(PolicyEvaluator):
    """A loaded ownership network (nets/ownership.py): ``evaluate(planes,
    colors)`` returns (batch, n * n) float32 probabilities that the player
    to move owns each point at the end of the game."""

    task = "ownership"

    def evaluate(self, planes: np.ndarray, colors: np.ndarray) -> np.ndarray:
        with self._lock, torch.inference_mode():
            x, col = self._tensors(planes, colors)
            with autocast(self.device, self.precision):
                logits = self.model(x, col)
            return torch.sigmoid(logits.float()).cpu().numpy()


class _Graphs:
    """The CUDA graphs of a :class:`PolicyEvaluator` (see its docstring),
    captured on first use.  Each holds static device tensors for its input
    (uint8 planes, colour indices, komi) and its outputs; a call copies the
    batch in (through the evaluator's pinned buffer), replays the graph and
    copies the first rows out.  The graphs share one memory pool: they run
    one at a time, under the evaluator's lock."""

    def __init__(self, evaluator: PolicyEvaluator):
        self.ev = evaluator
        self.usable = True
        self._graphs: dict = {}
        self._pool = None

    def run(self, planes: np.ndarray, colors: np.ndarray, komi) -> list[np.ndarray] | None:
        k, n = planes.shape[0], planes.shape[-1]
        if k == 0 or not self.ev.supports(n):
            return None                 # the eager path answers (or refuses) these
        key = (1 << max(0, (k - 1).bit_length()), n, komi is not None)
        entry = self._graphs.get(key)
        if entry is None:
            try:
                entry = self._graphs[key] = self._capture(*key)
            except Exception as e:      # e.g. an op that cannot be captured
                self.usable = False
                log.warning("CUDA graphs off, the network runs eagerly: capture failed: %s", e)
                return None
        graph, xs, cs, ks, outs = entry
        xs[:k].copy_(self.ev._host(planes), non_blocking=True)
        cs[:k].copy_(torch.from_numpy(np.asarray(colors, np.int64).reshape(k) - 1))
        if komi is not None:
            ks.fill_(float(komi))
        graph.replay()
        return [o[:k].cpu().numpy() for o in outs]

    def _capture(self, bucket: int, n: int, value: bool):
        ev, dev = self.ev, self.ev.device
        xs = torch.zeros((bucket, N_PLANES, n, n), dtype=torch.uint8, device=dev)
        xs[:, LEGAL] = 1                 # warm-up rows with legal moves
        cs = torch.zeros(bucket, dtype=torch.long, device=dev)
        ks = torch.zeros(bucket, dtype=torch.float32, device=dev)

        def forward(capture: bool = False):
            return ev._heads(xs.float(), cs, ks if value else None, capture)

        side = torch.cuda.Stream(dev)
        side.wait_stream(torch.cuda.current_stream(dev))
        with torch.cuda.stream(side):
            for _ in range(2):          # lazy initialisation happens outside the graph
                forward()
        torch.cuda.current_stream(dev).wait_stream(side)
        if self._pool is None:
            self._pool = torch.cuda.graph_pool_handle()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, pool=self._pool):
            outs = forward(capture=True)
        log.debug("CUDA graph captured: batch %d, %dx%d, %s", bucket, n, n,
                  "policy and value" if value else "policy")
        return graph, xs, cs, ks, outs


__all__ = ["DEFAULT_WEIGHTS", "DEFAULT_OWNERSHIP", "PolicyEvaluator", "OwnershipEvaluator",
           "pick_device"]
