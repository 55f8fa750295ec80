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


def fisher_exact(a: int, n1: int, b: int, n2: int) -> tuple[float, float]:
    """Fisher's exact test of ``a`` successes in ``n1`` trials against ``b``
    in ``n2``: the one-sided p that the first's rate is the higher (the
    chance of ``a`` or more when the ``a + b`` successes fall at random
    among the ``n1 + n2`` trials), and the two-sided p (every table no
    likelier than the one seen)."""
    if not (0 <= a <= n1 and 0 <= b <= n2):
        raise ValueError(f"successes outside their trials: {a} of {n1}, {b} of {n2}")
    n, k = n1 + n2, a + b
    total = math.comb(n, n1)
    pmf = {x: math.comb(k, x) * math.comb(n - k, n1 - x) / total
           for x in range(max(0, k - n2), min(k, n1) + 1)}
    greater = sum(p for x, p in pmf.items() if x >= a)
    seen = pmf[a] * (1 + 1e-7)
    two = sum(p for p in pmf.values() if p <= seen)
    return min(1.0, greater), min(1.0, two)
