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


def mann_whitney(a: list[float], b: list[float]) -> tuple[float, float, float]:
    """Mann-Whitney U of ``a`` against ``b`` (pairs where a's value is the
    larger, ties counting half), its z in the normal approximation with the
    variance corrected for ties, and the two-sided p.  z > 0: a's values
    tend to be the larger."""
    n1, n2 = len(a), len(b)
    if n1 == 0 or n2 == 0:
        return 0.0, 0.0, 1.0
    u = sum(1.0 if x > y else 0.5 if x == y else 0.0 for x in a for y in b)
    n = n1 + n2
    counts: dict[float, int] = {}
    for v in list(a) + list(b):
        counts[v] = counts.get(v, 0) + 1
    ties = sum(t ** 3 - t for t in counts.values())
    var = n1 * n2 / 12.0 * ((n + 1) - ties / (n * (n - 1)))
    if var <= 0:
        return u, 0.0, 1.0
    z = (u - n1 * n2 / 2.0) / math.sqrt(var)
    return u, z, math.erfc(abs(z) / math.sqrt(2))
