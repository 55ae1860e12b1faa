"""Measurements on trained networks: test accuracy, LPLL25's feature decomposition, and the
feature-averaging statistics (within-class lambda ratio, cross-class lambda, cosine matrix)."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ibcheck.simulate.substrate.data import Dataset
from ibcheck.solvers.networks import MulticlassReLU, TwoLayerReLU


def test_accuracy(net, X: np.ndarray, y: np.ndarray) -> float:
    """Fraction classified correctly; ``f(x) = 0`` counts as misclassified (the tie rule)."""
    if isinstance(net, MulticlassReLU):
        F = net.forward(X)
        top = F.max(axis=1, keepdims=True)
        unique = (F == top).sum(axis=1) == 1
        return float(np.mean((F.argmax(axis=1) == y) & unique))
    return float(np.mean(net.margins(X, y) > 0))


@dataclass
class Decomposition:
    """LPLL25.lemma.decomposition per neuron: ``w(T) - w(0) = sum_j lam_j mu_j + sum_i sig_i xi_i + r``.

    ``lam`` is (neurons, k), ``sig`` (neurons, n); ``residual`` is ``||r|| / ||w(T) - w(0)||``.
    """

    lam: np.ndarray
    sig: np.ndarray
    residual: np.ndarray


def feature_decomposition(W0: np.ndarray, W: np.ndarray, means: np.ndarray, noise: np.ndarray) -> Decomposition:
    """Least squares of each neuron's weight change on the span of the means and the noise.

    Pitfall avoided: the basis [mu; xi] is badly scaled (||mu|| = sqrt(d) against ||xi|| ~
    sigma sqrt(d)) and can be rank-deficient when k + n > d; ``lstsq`` with an SVD cutoff
    gives the minimum-norm coefficients instead of a blown-up solve of the normal equations.
    """
    B = np.vstack([means, noise]).T  # (d, k + n)
    dW = (W - W0).T  # (d, neurons)
    coef, *_ = np.linalg.lstsq(B, dW, rcond=None)
    resid = dW - B @ coef
    norms = np.linalg.norm(dW, axis=0)
    rel = np.divide(np.linalg.norm(resid, axis=0), norms, out=np.zeros_like(norms), where=norms > 0)
    k = means.shape[0]
    return Decomposition(lam=coef[:k].T, sig=coef[k:].T, residual=rel)


def cosine_matrix(W: np.ndarray, means: np.ndarray) -> np.ndarray:
    """cos(w_r, mu_j) for every neuron r and feature j: (neurons, k)."""
    Wn = W / np.maximum(np.linalg.norm(W, axis=1, keepdims=True), 1e-300)
    Mn = means / np.linalg.norm(means, axis=1, keepdims=True)
    return Wn @ Mn.T


def neuron_classes(net, data: Dataset) -> tuple[np.ndarray, np.ndarray]:
    """Each neuron's class and the boolean (neurons, k) mask of its same-class features.

    Binary networks: a neuron with a_r > 0 serves J+, with a_r < 0 serves J-.
    Multiclass networks: a neuron of output j serves feature j alone.
    """
    k = data.means.shape[0]
    if isinstance(net, MulticlassReLU):
        cls = net.neuron_class
        return cls, cls[:, None] == np.arange(k)[None, :]
    if isinstance(net, TwoLayerReLU):
        plus = np.isin(np.arange(k), data.J_plus)
        sign = np.sign(net.a)
        return sign, np.where(sign[:, None] > 0, plus[None, :], ~plus[None, :])
    raise TypeError(f"no feature statistics for a {net.kind} network")


def feature_statistics(net, W0: np.ndarray, data: Dataset) -> dict:
    """The feature-averaging (or decoupling) statistics of one trained network on cluster data.

    * ``cosine_same_class_mean`` / ``cosine_other_class_mean``: mean cos(w_r, mu_j) over
      same-class / other-class features (LPLL25.thm.feature_averaging predicts
      ``1/sqrt(|J_s|)`` and 0; for the multiclass model the same class is the diagonal);
    * ``lambda_within_class_ratio``: the median over neurons of max/min of lambda over the
      neuron's class (inf where a coefficient is <= 0); 1 means perfect averaging;
    * ``lambda_cross_class_max``: the largest |lambda| on another class's features, relative
      to the neuron's mean same-class lambda.
    """
    if data.means is None or data.noise is None:
        return {}
    W = net.W
    dec = feature_decomposition(W0, W, data.means, data.noise)
    C = cosine_matrix(W, data.means)
    _, same = neuron_classes(net, data)
    other = ~same
    lam = dec.lam
    ratios = []
    cross = []
    for r in range(lam.shape[0]):
        own = lam[r, same[r]]
        ratios.append(own.max() / own.min() if own.size and own.min() > 0 else np.inf)
        scale = np.abs(own).mean() if own.size else np.nan
        cross.append(np.abs(lam[r, other[r]]).max() / scale if other[r].any() and scale > 0 else np.nan)
    ratios = np.array(ratios)
    return {
        "cosine_same_class_mean": float(C[same].mean()),
        "cosine_other_class_mean": float(C[other].mean()) if other.any() else None,
        "cosine_other_class_absmax": float(np.abs(C[other]).max()) if other.any() else None,
        "lambda_within_class_ratio": float(np.median(ratios)),
        "lambda_within_class_ratio_max": float(ratios.max()),
        "lambda_same_class_mean": float(lam[same].mean()),
        "lambda_cross_class_max": float(np.nanmax(cross)) if np.isfinite(cross).any() else None,
        "decomposition_residual_max": float(dec.residual.max()),
        "cosine_matrix": C,
    }
