"""Certified KKT points of (P) on one training sample: the objects FVBS23.thm.4_2 and VYS22.thm.main speak of.

Both theorems are about *every* KKT point of the max-margin problem (P) on the sample. At one
(cell, seed) this module draws the sample once, trains several networks on it from different
initializations (loss-based GD on the summed exponential loss), and certifies each as an
(eps, delta)-KKT point of (P) with :func:`ibcheck.solvers.kkt.certificate.kkt_certificate`.
A network that does not certify is polished (:func:`ibcheck.solvers.kkt.polish.pattern_polish`:
(P) on its activation cone, its patterns flipped where a wall binds) and certified again. A
network that still does not certify is kept in the record as uncertified and never measured.

Thresholds are scale-free: ``eps`` bounds the stationarity residual ``||theta - sum lambda_i
grad q_i|| / ||theta||`` and ``delta`` the complementary slackness ``max lambda_i (q_i - 1) /
sum lambda_i``, both at unit margin. Pitfall avoided: absolute thresholds would certify or
reject a network according to its scale, which a homogeneous network does not fix.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

EPS = 1e-3  # stationarity residual, relative to ||theta||
DELTA = 1e-3  # complementary slackness, relative to sum lambda


@dataclass(frozen=True)
class CertifiedNetwork:
    """One trained network after certification (and polishing where needed), at unit margin."""

    net: object  # TwoLayerReLU, scaled to min margin 1
    init_seed: int
    eps: float  # relative stationarity residual
    delta: float  # relative complementary slackness
    feasible: bool
    solver_status: str
    polished: bool

    def certified(self, eps: float = EPS, delta: float = DELTA) -> bool:
        """An (eps, delta)-KKT point of (P) by an optimal solver status (nan never certifies)."""
        return self.solver_status == "optimal" and self.feasible and self.eps <= eps and self.delta <= delta


@dataclass(frozen=True)
class KKTSample:
    """The sample, its trained networks with their certificates, and the thresholds used."""

    dataset: object
    networks: tuple[CertifiedNetwork, ...]
    eps: float = EPS
    delta: float = DELTA

    def certified(self, eps: float | None = None, delta: float | None = None) -> list[CertifiedNetwork]:
        e, d = self.eps if eps is None else eps, self.delta if delta is None else delta
        return [c for c in self.networks if c.certified(e, d)]

    def record(self) -> dict:
        """The scalars stored with the row: counts, the largest residuals of the certified networks, and every
        network's residuals (so the verdict can be recomputed at other thresholds)."""
        ok = self.certified()
        return {"kkt_trained": len(self.networks), "kkt_certified": len(ok),
                "kkt_eps": max((c.eps for c in ok), default=None), "kkt_delta": max((c.delta for c in ok), default=None),
                "kkt_eps_threshold": self.eps, "kkt_delta_threshold": self.delta,
                "kkt_polished": sum(c.polished for c in self.networks),
                "kkt_networks": [{"init_seed": c.init_seed, "eps": c.eps, "delta": c.delta, "feasible": c.feasible,
                                  "solver_status": c.solver_status, "polished": c.polished} for c in self.networks]}


class UncertifiedSample(RuntimeError):
    """No network trained on the sample certified as a KKT point: the row fails with this reason, never fitted."""


def _certify(net, X, y, init_seed: int, polished: bool) -> CertifiedNetwork:
    from ibcheck.solvers.kkt.certificate import kkt_certificate

    c = kkt_certificate(net, X, y)
    return CertifiedNetwork(c.scaled, init_seed, float(c.stationarity_residual), float(c.complementary_slackness_rel),
                            bool(c.feasible), c.solver_status, polished)


def certify_or_polish(net, X: np.ndarray, y: np.ndarray, init_seed: int, eps: float = EPS, delta: float = DELTA,
                      attempts: int = 3) -> CertifiedNetwork:
    """Certify ``net``; while it fails (at most ``attempts`` times), polish it on its activation cone and certify the end
    point instead. A polish restarted from the last end point reads its exact ties (zero pre-activations) afresh,
    which settles the patterns a solver's last digits left ambiguous."""
    from ibcheck.solvers.kkt.polish import pattern_polish

    best = _certify(net, X, y, init_seed, False)
    for _ in range(attempts):
        if best.certified(eps, delta):
            return best
        p = pattern_polish(net, X, y)
        if p.net is net:  # the cone program failed: the last certificate stands
            return best
        net = p.net
        best = _certify(net, X, y, init_seed, True)
    return best


def certify_run(run, eps: float = EPS, delta: float = DELTA) -> KKTSample:
    """Certify every network of ``run`` (several initializations trained on its one sample), polishing where needed.
    A network that does not separate the sample is no point of (P): it is kept, uncertified."""
    ds = run.datasets[0]
    certs = []
    for net, summ in zip(run.networks, run.summary):
        if summ["train_accuracy"] < 1.0:
            certs.append(CertifiedNetwork(net, summ["seed"], float("nan"), float("nan"), False, "not separating", False))
            continue
        certs.append(certify_or_polish(net, ds.X, ds.y, summ["seed"], eps, delta))
    return KKTSample(ds, tuple(certs), eps, delta)


def largest_over_certified(values: list, sample: KKTSample, eps: float | None = None, delta: float | None = None):
    """The largest of ``values`` (one per network of ``sample``; censored ones allowed) over the certified networks only.

    "Every KKT point" claims constrain the largest; an uncertified network never enters it.
    Raises :class:`UncertifiedSample` when no network certifies."""
    from ibcheck.simulate.stats.censored import censored_max

    e, d = sample.eps if eps is None else eps, sample.delta if delta is None else delta
    kept = [v for v, c in zip(values, sample.networks) if c.certified(e, d)]
    if not kept:
        raise UncertifiedSample(f"none of the {len(sample.networks)} networks trained on this sample certified as an "
                                f"(eps={e:g}, delta={d:g})-KKT point of (P), even after polishing")
    return censored_max(kept)
