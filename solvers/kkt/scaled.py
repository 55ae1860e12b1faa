"""The KKT certificate at any scale: the engine's certificate (:func:`.certificate.kkt_certificate`) behind a float64
guard, for networks and data given by a user (``ibcheck.kkt_certificate``).

Takes a homogeneous two-layer ReLU network and data ``X, y`` at any scale (1e-300 .. 1e300, or columns of mixed
scales); returns a :class:`.certificate.KKTCertificate` whose status says "not proven" wherever float64 cannot decide:
a margin within its rounding error of 0, parameters at unit margin past what the multiplier program holds, a trained
bias beside data more than 2^GRAM_RANGE from unit scale, or a unit scaling that underflows. The margins are computed in
normalized units (:func:`..radius.units.rescaled`: powers of two carried apart), so ``min_margin`` is the network's own.

The engine's search keeps calling the certificate itself, unchanged: its recall (``recall.json``) was measured with
it, and on data at unit scale this guard hands the certificate the same network it would build itself.
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from ibcheck.errors import InputError

from ..networks import TwoLayerReLU
from ..radius.units import exponent, rescaled
from .certificate import KKTCertificate, _failed, _unit_scale, kkt_certificate, require_homogeneous
from .jacobian import scale_to_unit_margin

U = 2.0 ** -53  # float64's unit roundoff


def _margin_bounds(net: TwoLayerReLU, X: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(q, err)``: the margins and a bound on their rounding error (the first layer's sums, then the second's; a
    neuron whose pre-activation is negative beyond its own error contributes exactly 0)."""
    d, m = X.shape[1], net.W.shape[0]
    Z = net.preactivations(X)
    zabs = np.abs(X) @ np.abs(net.W).T + (np.abs(net.b) if net.b is not None else 0.0)
    errz = 2.0 * (d + 4) * U * zabs + d * np.ldexp(1.0, -1070)
    R = np.maximum(Z, 0.0)
    q = y * (R @ net.a)
    maybe = Z > -errz
    err = 2.0 * (m + 4) * U * (R @ np.abs(net.a)) + np.where(maybe, errz, 0.0) @ np.abs(net.a)
    return q, err


def _unit_margin(net: TwoLayerReLU, X: np.ndarray, y: np.ndarray) -> tuple[TwoLayerReLU, np.ndarray, float] | KKTCertificate:
    """``(theta / q_min^(1/L), the data, q_min before scaling)``: the network at unit margin, computed in normalized
    units (:func:`..radius.units.rescaled`: the margins are evaluated with the data and every layer at unit scale and a
    power of two carried apart, and theta divided exactly by that power and by the rest of q_min), with the data at
    unit scale for a bias-free network (its margins are 1-homogeneous in x, so its KKT points do not depend on the
    data's scale). A network whose margin at some point is 0 or negative beyond its rounding error misclassifies it
    (InputError); one whose margin is within float64 resolution of 0 gets a "not proven" certificate.

    Pitfall avoided: ``theta / max |theta|`` of a network with W at 1e200 (data at 1e-200) and b, a at 1 left margins
    of 1e-400, which underflowed: "misclassifies a training point (q_min = -0)"."""
    Xu, data_e = X, 0
    if net.b is None:
        e = exponent(X)
        if e:
            Xu, data_e = np.ldexp(X, -e), e
    if net.b is not None and "b" not in net.trained:  # margins not homogeneous in theta: the former path
        unit, Xu, factor = _unit_scale(net, X)
        scaled, qmin = scale_to_unit_margin(unit, Xu, y)
        with np.errstate(over="ignore"):
            return scaled, Xu, float(np.float64(qmin) * factor)
    unit, Xs, _, out = rescaled(net, Xu)  # f(x) = 2^out f'(x / 2^e) for the rows x of Xu
    q, err = _margin_bounds(unit, Xs, y)
    i = int(np.argmin(q - err))
    with np.errstate(over="ignore", under="ignore"):
        q_i = float(np.ldexp(q[i], out + data_e))
    if np.any(q + err <= 0):
        j = int(np.argmin(q + err))
        with np.errstate(over="ignore", under="ignore"):
            q_j = float(np.ldexp(q[j], out + data_e))
        raise InputError(f"the network misclassifies a training point (q_{j} = {q_j:.3g}, beyond its rounding error): not feasible for (P)")
    if not q[i] - err[i] > 0:
        return _failed(f"not proven: the margin of point {i}, q = {q_i:.3g}, is within float64 resolution of 0 "
                       "(its sign is not decided by float64)", net, q_i, 0, 0)
    qmin = float(np.min(q))
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        former, Xf, factor = _unit_scale(net, X)  # where its margins are well inside float64, the former path, as it was
        qf = former.margins(Xf, y)
        qmin_f = float(qf.min())
        agree = 0 < qmin_f < math.inf and abs(float(np.ldexp(qmin, out + data_e)) / (qmin_f * factor) - 1) < 1e-9
    if agree and qmin_f > 2.0 ** -500:
        scaled, qmin_f = scale_to_unit_margin(former, Xf, y)
        with np.errstate(over="ignore"):
            return scaled, Xf, float(np.float64(qmin_f) * factor)
    mq, eq = np.frexp(qmin)
    total = int(out) + int(eq)  # q_min on Xu is mq 2^total
    theta = net.params()
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        if net.degree == 1:
            theta_u = np.ldexp(theta / mq, -total)
        else:
            half, odd = divmod(total, 2)
            theta_u = np.ldexp(theta / math.sqrt(mq), -half) / (math.sqrt(2.0) if odd else 1.0)
        qmin_orig = float(np.ldexp(qmin, out + data_e))
    top = float(np.max(np.abs(theta_u), initial=0.0))
    if not (np.isfinite(theta_u).all() and top < 2.0 ** 500):
        return _failed(f"not proven: at unit margin the parameters reach {top:.3g}, past what the multiplier program can hold "
                       "in float64 (||theta||^2 overflows)", net, qmin_orig, 0, 0)
    return net.with_params(theta_u), Xu, qmin_orig


GRAM_RANGE = 26  # a trained bias's column (1) and data at 2^+-26 share one float64 Gram matrix (2^52 apart) at most


def _gram_resolution(scaled: TwoLayerReLU, X: np.ndarray, cert: KKTCertificate) -> KKTCertificate:
    """A certificate that failed on a network with a trained bias, where the data's scale and the bias column (1) are
    more than 2^GRAM_RANGE apart, is "not proven": the Gram matrix ``X X^T + 1`` holds one of the two blocks below
    float64 resolution, so the program may miss the multipliers that exist (the residual it reports is that of the
    multipliers it found, an upper bound). A certificate that passed stands: its residual is recomputed as a vector."""
    if scaled.b is None or "b" not in scaled.trained or cert.is_kkt():
        return cert
    e = exponent(X) or 0
    if abs(e) <= GRAM_RANGE:
        return cert
    return replace(cert, solver_status=f"not proven (data at 2^{e} beside a trained bias: the multiplier program's Gram matrix "
                   f"cannot hold both blocks in float64; the multipliers found leave a residual of {cert.stationarity_residual:.3g})")


def certificate_at_any_scale(net: TwoLayerReLU, X: np.ndarray, y: np.ndarray, active_tol: float = 1e-6,
                             tie_tol: float = 1e-9) -> KKTCertificate:
    """LL20.def.kkt certified at ``net`` on ``X, y`` at any scale: :func:`_unit_margin` (the network at unit margin in
    normalized units, or a "not proven" certificate), then the engine's certificate on it, its ``min_margin`` the
    network's own, and :func:`_gram_resolution`. A misclassification is refused (InputError) only where a margin <= 0 is
    proven beyond its rounding error."""
    require_homogeneous(net)
    X = np.asarray(X, float)
    y = np.asarray(y, float)
    unit = _unit_margin(net, X, y)
    if isinstance(unit, KKTCertificate):
        return unit
    scaled, Xu, qmin_orig = unit
    try:
        cert = kkt_certificate(scaled, Xu, y, active_tol=active_tol, tie_tol=tie_tol)
    except InputError as err:  # the margins were proven positive above: a unit scaling that underflows, not a misclassification
        if "misclassifies" not in str(err):
            raise
        return _failed(f"not proven: the margins are positive (q_min = {qmin_orig:.3g}), but at unit parameter scale they "
                       "underflow float64", scaled, qmin_orig, 0, 0)
    return _gram_resolution(cert.scaled if cert.scaled is not None else scaled, Xu, replace(cert, min_margin=qmin_orig))
