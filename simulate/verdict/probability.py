"""A bound that holds with probability 1 - delta over the sample: ``quantity <= eps`` w.p. >= 1 - delta.

Takes, per sample (one GD run's sample: one observation), the errors of its worst object on fresh points (a count out
of N) and returns a :class:`ProbabilityTest`: FVBS23.thm.3_1 says every KKT point of (P) has test error <= eps with
probability >= 1 - delta, so the fraction of samples whose worst distinct KKT point errs above eps is at most delta.

Two stages, each at alpha / 2 (so that the whole test is at level alpha):

1. each sample is classified from its count with one-sided Clopper-Pearson bounds at level alpha / (2S) (Bonferroni
   over the S samples): ``exceeds`` (the lower bound is above eps), ``within`` (the upper bound is at most eps), or
   ``unresolved`` (N fresh points cannot tell);
2. the number of samples that exceed is tested against Binomial(S, delta): ``inconsistent`` when
   P[Binom(S, delta) >= exceed] < alpha / 2. ``consistent`` when the (1 - alpha/2) upper bound on the rate of samples
   that exceed, counting the unresolved as exceeding, is at most delta. Otherwise ``inconclusive``, with the number of
   samples (none exceeding) that would bound the rate below delta.

Pitfall avoided: classifying each sample at 95% would call about 5% of good samples bad, which is delta's own order.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence

from scipy import stats

from ibcheck.solvers.binomial import lower_confidence, upper_confidence

_upper, _lower = upper_confidence, lower_confidence  # one implementation (solvers/binomial.py)


@dataclass(frozen=True)
class SampleError:
    """One sample: its cell and seed, the worst object's errors out of ``points`` fresh points, and its class."""

    cell: Mapping[str, float]
    seed: int
    errors: int
    points: int
    lower: float
    upper: float
    status: str  # "exceeds", "within", "unresolved"

    def as_json(self) -> dict:
        return {"cell": dict(self.cell), "seed": self.seed, "errors": self.errors, "points": self.points,
                "rate": self.errors / self.points, "lower": self.lower, "upper": self.upper, "status": self.status}


@dataclass(frozen=True)
class ProbabilityTest:
    """The test of ``quantity <= eps`` with probability >= 1 - delta over S samples (see the module docstring)."""

    quantity: str
    eps: float
    delta: float
    alpha: float
    samples: tuple[SampleError, ...]
    p_value: float  # P[Binom(S, delta) >= exceed]: small refutes the claim
    rate_upper: float  # the (1 - alpha/2) upper bound on the rate of samples exceeding (unresolved counted as exceeding)
    samples_needed: int  # samples, none exceeding, whose upper bound would be at most delta
    verdict: str
    reason: str

    @property
    def exceed(self) -> int:
        return sum(s.status == "exceeds" for s in self.samples)

    @property
    def unresolved(self) -> int:
        return sum(s.status == "unresolved" for s in self.samples)

    def as_json(self) -> dict:
        return {"quantity": self.quantity, "eps": self.eps, "delta": self.delta, "alpha": self.alpha, "verdict": self.verdict,
                "reason": self.reason, "samples": len(self.samples), "exceed": self.exceed, "unresolved": self.unresolved,
                "p_value": self.p_value, "rate_upper": self.rate_upper, "samples_needed": self.samples_needed,
                "per_sample": [s.as_json() for s in self.samples]}


def samples_needed(delta: float, alpha: float) -> int:
    """The smallest S whose (1 - alpha) upper bound with no sample exceeding is at most delta: 1 - alpha^(1/S) <= delta."""
    return math.ceil(math.log(alpha) / math.log(1 - delta))


def probability_test(observations: Sequence[tuple[Mapping[str, float], int, int, int]], quantity: str, eps: float,
                     delta: float, alpha: float = 0.05) -> ProbabilityTest:
    """``observations``: per sample (cell, seed, errors, points). The verdict on ``quantity <= eps`` w.p. >= 1 - delta."""
    S = len(observations)
    level = alpha / (2 * max(S, 1))
    samples = []
    for cell, seed, k, n in observations:
        lo, hi = _lower(k, n, level), _upper(k, n, level)
        status = "exceeds" if lo > eps else "within" if hi <= eps else "unresolved"
        samples.append(SampleError(cell, seed, k, n, lo, hi, status))
    exceed = sum(s.status == "exceeds" for s in samples)
    bad = exceed + sum(s.status == "unresolved" for s in samples)
    p = float(stats.binom.sf(exceed - 1, S, delta)) if S else 1.0
    upper = _upper(bad, S, alpha / 2) if S else 1.0
    need = samples_needed(delta, alpha / 2)
    if S and p < alpha / 2:
        verdict, why = "inconsistent", (f"{exceed} of {S} samples have a worst KKT point erring above eps = {eps:g} (each at "
                                        f"level {level:.2g}); under the claim at most delta = {delta:g} of them should: "
                                        f"P[Binomial({S}, {delta:g}) >= {exceed}] = {p:.2g} < {alpha / 2:g}")
    elif S and upper <= delta:
        verdict, why = "consistent", (f"{exceed} of {S} samples err above eps = {eps:g} ({bad - exceed} unresolved, counted as "
                                      f"exceeding): the rate is at most {upper:.3f} <= delta = {delta:g} ({1 - alpha / 2:.3g} bound)")
    else:
        verdict, why = "inconclusive", (f"not refuted: {exceed} of {S} samples err above eps = {eps:g} "
                                        f"({bad - exceed} unresolved); the rate of such samples is at most {upper:.3f} "
                                        f"({1 - alpha / 2:.3g} bound), above delta = {delta:g}; {need} samples with none "
                                        f"exceeding would bound it below delta")
    return ProbabilityTest(quantity, eps, delta, alpha, tuple(samples), p, upper, need, verdict, why)
