"""One-sided Clopper-Pearson bounds of a binomial fraction k / n: the one implementation the flip norms, the transfer
test (solvers/kkt/flip.py) and the probability claims' test (simulate/verdict/probability.py) all call.

Pitfall avoided: a normal-approximation bound at k near 0 or n (a flip fraction of 0.99 on 2000 points) is not a bound."""
from __future__ import annotations


def lower_confidence(k: int, n: int, alpha: float = 0.05) -> float:
    """The one-sided (1 - alpha) Clopper-Pearson lower bound of k / n (0 when k = 0)."""
    from scipy import stats  # heavy: scipy (loaded on first use)

    return 0.0 if k <= 0 else float(stats.beta.ppf(alpha, k, n - k + 1))


def upper_confidence(k: int, n: int, alpha: float = 0.05) -> float:
    """The one-sided (1 - alpha) Clopper-Pearson upper bound of k / n (1 when k = n)."""
    from scipy import stats  # heavy: scipy (loaded on first use)

    return 1.0 if k >= n else float(stats.beta.ppf(1 - alpha, k + 1, n - k))
