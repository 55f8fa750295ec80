"""Which arithmetic the network runs in: bf16 autocast where the hardware is
fast at it, float32 elsewhere.

On CUDA, bf16 autocast wherever the GPU supports bf16 (Ampere and later).
On a CPU, bf16 pays only where the processor has bf16 instructions: AMX
(``amx_bf16``, Intel Sapphire Rapids and later) or AVX-512 BF16
(``avx512_bf16``, Intel Cooper Lake, AMD Zen 4).  There PyTorch's oneDNN
kernels run a bf16 convolution 2-4x faster than float32 (README, "CPU
inference speed"); without them bf16 is emulated and slower than float32.
The choice is made from the flags the kernel reports in /proc/cpuinfo; on
systems without that file (macOS, Windows) ``auto`` means float32.

``--precision auto|fp32|bf16`` on the trainer and the engine forces either.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import torch

PRECISIONS = ("auto", "fp32", "bf16")

#: CPU flags (as /proc/cpuinfo spells them) that make bf16 fast.
BF16_FLAGS = ("amx_bf16", "avx512_bf16")


def cpu_flags(cpuinfo: str | Path = "/proc/cpuinfo") -> set[str]:
    """The first processor's flags; empty when the file cannot be read."""
    try:
        text = Path(cpuinfo).read_text(errors="replace")
    except OSError:
        return set()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            return set(value.split())
    return set()


def resolve(spec: str, device: torch.device, flags: set[str] | None = None) -> tuple[str, str]:
    """(precision, reason): ``spec`` (auto, fp32 or bf16) made concrete for
    ``device``, and a few words saying why, for the log."""
    if spec not in PRECISIONS:
        raise ValueError(f"unknown precision {spec!r} (choose from {', '.join(PRECISIONS)})")
    if spec != "auto":
        return spec, "asked for"
    if device.type == "cuda":
        if torch.cuda.is_bf16_supported():
            return "bf16", "the GPU supports bf16"
        return "fp32", "the GPU lacks bf16"
    if device.type != "cpu":
        return "fp32", f"no bf16 rule for {device.type}"
    have = sorted(set(BF16_FLAGS) & (cpu_flags() if flags is None else flags))
    if have:
        return "bf16", f"the CPU has {' and '.join(have)}"
    return "fp32", "the CPU has no bf16 instructions (" + ", ".join(BF16_FLAGS) + ")"


def autocast(device: torch.device, precision: str, cache: bool = True):
    """A context manager running the network in ``precision`` on ``device``
    (``cache=False`` for a CUDA graph capture: autocast's cache of cast
    weights must not outlive it)."""
    if precision == "bf16":
        return torch.autocast(device_type=device.type, dtype=torch.bfloat16, cache_enabled=cache)
    return contextlib.nullcontext()


__all__ = ["PRECISIONS", "BF16_FLAGS", "cpu_flags", "resolve", "autocast"]
