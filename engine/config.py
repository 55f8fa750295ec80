"""Engine settings, built once from the command line (engine/gtp.py) and
passed down; frozen so no part of the engine changes them behind another's
back."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EngineConfig:
    board_size: int = 19        # size after start-up and before any boardsize
    komi: float = 7.5           # komi until the controller sends one
    rollouts: int = 10000       # playouts per genmove
    seed: int = 0               # random seed; 0 picks one from the clock
