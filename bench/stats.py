"""Statistics shared by the benches (standard library only, so that a
bench runs where sgfmill is missing, as on a lent GPU machine)."""

from __future__ import annotations

import math


def wilson(successes: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """95% Wilson score interval for a binomial proportion."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    d = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / d
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return max(0.0, centre - half), min(1.0, centre + half)


def sign_test(a: int, b: int) -> float:
    """Two-sided exact sign test (McNemar's, exact): the probability of a
    split at least as uneven as a against b among a + b discordant pairs
    when either side of a pair is equally likely."""
    n = a + b
    if n == 0:
        return 1.0
    k = min(a, b)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n
    return min(1.0, 2 * tail)
