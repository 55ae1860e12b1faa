"""The KKT certificate at any scale: the engine's certificate (:func:`.certificate.kkt_certificate`) behind a float64
guard, for networks and data given by a user (``ibcheck.kkt_certificate``).

Takes a homogeneous two-layer ReLU network and data ``X, y`` at any scale (1e-300 .. 1e300, or columns of mixed
scales); returns a :class:`.certificate.KKTCertificate` whose status says "not proven" wherever float64 cannot decide:
a margin within its rounding error of 0, parameters at unit margin past what the multiplier program holds, a failed
certificate on data whose columns (or a trained bias's column of ones) are more than 2^GRAM_RANGE apart (the program's
Gram matrix cannot hold them all), data that fall below float64's range at unit scale where that could matter, a
certificate that holds only through near-ties (Euler's identity off), or a unit scaling that underflows. The margins
are computed on the data as given, column by column at each column's scale (:func:`..radius.units.margin_parts`), so
``min_margin`` is the network's own.

The engine's search keeps calling the certificate itself, unchanged: its recall (``recall.json``) was measured with
it, and on data at unit scale this guard hands the certificate the same network it would build itself.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from ibcheck.errors import InputError

from ..networks import TwoLayerReLU
from ..radius.units import _NONE, ULP, exponent, margin_parts, preactivation_parts
from .certificate import KKTCertificate, _failed, _unit_scale, kkt_certificate, require_homogeneous
from .extended import EXTENDED, certify_near
from .jacobian import scale_to_unit_margin


def _value(m: float, e: int) -> float:
    """``m 2^e`` as a float (0 or inf past float64's range)."""
    with np.errstate(over="ignore", under="ignore"):
        return float(np.ldexp(m, int(np.clip(e, -4000, 4000))))


def _theta_at_unit_margin(net: TwoLayerReLU, mq: float, total: int) -> np.ndarray:
    """``theta / q_min^(1/L)`` for ``q_min = mq 2^total`` (mq in [1/2, 1)), the power of two divided exactly."""
    theta = net.params()
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        if net.degree == 1:
            return np.ldexp(theta / mq, -total)
        half, odd = divmod(total, 2)
        return np.ldexp(theta / math.sqrt(mq), -half) / (math.sqrt(2.0) if odd else 1.0)


def _unit_margin(net: TwoLayerReLU, X: np.ndarray, y: np.ndarray) -> tuple[TwoLayerReLU, np.ndarray, float] | KKTCertificate:
    """``(theta / q_min^(1/L), the data, q_min before scaling)``: the network at unit margin, with the data at unit scale
    for a bias-free network (its margins are 1-homogeneous in x, so its KKT points do not depend on the data's scale).
    The margins are evaluated on X as given with rounding bounds (:func:`..radius.units.margin_parts`: each column at its
    own scale, each product's exponent carried apart), and theta is divided exactly by the power of two of q_min and by
    the rest of it. A network whose margin at some point is 0 or negative beyond its rounding error misclassifies it
    (InputError); one whose margin is within float64 resolution of 0 gets a "not proven" certificate.

    Pitfalls avoided: ``theta / max |theta|`` of a network with W at 1e200 (data at 1e-200) and b, a at 1 left margins
    of 1e-400, which underflowed: "misclassifies a training point (q_min = -0)"; and one scaling of all of X (its
    largest entry at 1) flushed the small column of ``X x [1e-200, 1e200]`` to 0, so margins of 1e-200 read "q = 0,
    within float64 resolution of 0"."""
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
    qm, qe, em = margin_parts(net, X, y)  # q_i = qm_i 2^qe_i, within em_i 2^qe_i
    wrong = np.flatnonzero(qm + em <= 0)
    if len(wrong):
        j = int(wrong[np.argmin([_value(float(qm[k]), int(qe[k])) for k in wrong])])
        raise InputError(f"the network misclassifies a training point (q_{j} = {_value(float(qm[j]), int(qe[j])):.3g}, beyond its rounding error): "
                         "not feasible for (P)")
    open_ = np.flatnonzero(~(qm - em > 0))
    if len(open_):
        i = int(open_[np.argmin([_value(float(qm[k]), int(qe[k])) for k in open_])])
        q_i = _value(float(qm[i]), int(qe[i]))
        return _failed(f"not proven: the margin of point {i}, q = {q_i:.3g}, is within float64 resolution of 0 "
                       "(its sign is not decided by float64)", net, q_i, 0, 0)
    i = int(np.argmin(qe + np.log2(qm)))
    mq, eq = np.frexp(qm[i])
    total = int(qe[i]) + int(eq) - data_e  # q_min on Xu is mq 2^total
    qmin_orig = _value(float(mq), int(qe[i]) + int(eq))
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        former, Xf, factor = _unit_scale(net, X)  # where its margins are well inside float64, the former path, as it was
        qf = former.margins(Xf, y)
        qmin_f = float(qf.min())
        agree = 0 < qmin_f < math.inf and abs(qmin_orig / (qmin_f * factor) - 1) < 1e-9
    if agree and qmin_f > 2.0 ** -500:
        scaled, qmin_f = scale_to_unit_margin(former, Xf, y)
        with np.errstate(over="ignore"):
            return scaled, Xf, float(np.float64(qmin_f) * factor)
    theta_u = _theta_at_unit_margin(net, float(mq), total)
    top = float(np.max(np.abs(theta_u), initial=0.0))
    if not (np.isfinite(theta_u).all() and top < 2.0 ** 500):
        return _failed(f"not proven: at unit margin the parameters reach {top:.3g}, past what the multiplier program can hold "
                       "in float64 (||theta||^2 overflows)", net, qmin_orig, 0, 0)
    return net.with_params(theta_u), Xu, qmin_orig


GRAM_RANGE = 26  # two columns (a trained bias's column of ones among them) 2^26 apart share one float64 Gram matrix (2^52) at most
LOSS_TOL = 1e-9  # data lost to underflow at unit scale may move a margin or the residual by this much (relative) at most


def _column_exponents(X: np.ndarray, bias: bool) -> list[int]:
    """The exponent of each nonzero column's largest entry (and 1 for a trained bias's column of ones)."""
    top = np.max(np.abs(X), axis=0, initial=0.0) if X.size else np.zeros(0)
    out = [int(e) for e in np.frexp(top[top > 0])[1]]
    return out + [1] if bias else out


def _gram_resolution(scaled: TwoLayerReLU, X: np.ndarray, cert: KKTCertificate) -> KKTCertificate:
    """A certificate that failed where the data's columns, or a trained bias's column of ones beside them, are more than
    2^GRAM_RANGE apart is "not proven": the Gram matrix ``X X^T (+ 1)`` holds the smaller ones below float64 resolution,
    so the program may miss the multipliers that exist (the residual it reports is that of the multipliers it found,
    an upper bound). A certificate that passed stands: its residual is recomputed as a vector, coordinate by
    coordinate.

    Pitfall avoided: at ``X x [1e-100, 1e100]`` a KKT point read "not certified (stationarity residual 0.707)": the
    program never saw the small column, which alone carries the margins."""
    bias = scaled.b is not None and "b" in scaled.trained
    if cert.is_kkt():
        return cert
    ex = _column_exponents(X, bias)
    if not ex or max(ex) - min(ex) <= GRAM_RANGE:
        return cert
    found = f"the multipliers found leave a residual of {cert.stationarity_residual:.3g}"
    e = exponent(X) or 0
    if bias and abs(e) > GRAM_RANGE:
        return replace(cert, solver_status=f"not proven (data at 2^{e} beside a trained bias: the multiplier program's Gram matrix "
                       f"cannot hold both blocks in float64; {found})")
    return replace(cert, solver_status=f"not proven (the data's columns reach 2^{min(ex)} .. 2^{max(ex)}: the multiplier program's "
                   f"Gram matrix cannot hold them all in float64; {found})")


def _data_loss(X: np.ndarray, Xu: np.ndarray, scaled: TwoLayerReLU, cert: KKTCertificate) -> KKTCertificate:
    """A certificate on data of which some entries fell below float64's normal range at unit scale (a column far below
    the largest) is "not proven" unless that loss (at most 2^-1074 per entry) moves no margin and no residual by more
    than LOSS_TOL: the engine saw slightly different data."""
    lost = (X != 0) & (np.abs(Xu) < 2.0 ** -1022) & (np.abs(Xu) < np.abs(X))  # shrunk into the subnormal range, or to 0
    if not lost.any():
        return cert
    dx = float(np.sqrt(lost.sum(axis=1)).max()) * 2.0 ** -1074  # the largest ||x_i - x_i seen||
    an = float(np.linalg.norm(scaled.a))
    tn = float(np.linalg.norm(scaled.params()))
    lam = float(np.sum(cert.lam)) if cert.lam is not None and cert.lam.size else 0.0
    with np.errstate(over="ignore", invalid="ignore"):
        moves = max(an * float(np.linalg.norm(scaled.W, 2)) * dx, lam * an * dx / tn if tn > 0 else math.inf)
    if moves <= LOSS_TOL:
        return cert
    return replace(cert, solver_status="not proven (entries of the data fall below float64's range at unit scale, where the multiplier "
                   "program reads them, and could move its answer)")


EULER_TOL = 1e-3  # Euler's identity L sum(lambda) = ||theta||^2 at a KKT point: a passing certificate off it by more rests on near-ties


def _euler(cert: KKTCertificate) -> KKTCertificate:
    """A certificate that passes while Euler's identity ``L sum(lambda) = ||theta||^2`` (exact at every KKT point of a
    homogeneous network, ties included: ``<g, theta> = L q_i`` for every Clarke subgradient g) fails by more than
    EULER_TOL is "not proven": it rests on pre-activations that the program's tie tolerance (absolute, at unit margin)
    calls 0 though they are far from 0 at their neurons' own scale.

    Pitfall avoided: ``W = [[1e-200, 0], [-1e-200, 0]], a = (1, -1)`` (W mapped to a column at 1e200; on data at unit
    scale, W x 1e-100 does the same) read "a KKT point": at unit margin its pre-activations, 1e-100 while a is 1e100,
    were all ties, and with ReLU'(0) = 0 there stationarity holds to 1e-200; Euler's gap is 1."""
    if not cert.is_kkt() or not cert.euler_gap > EULER_TOL:
        return cert
    return replace(cert, solver_status=f"not proven (stationarity holds only through {cert.n_ties} pre-activation(s) within the program's tie "
                   f"tolerance of 0, not 0 at their neurons' scale: Euler's identity L sum(lambda) = ||theta||^2 fails by {cert.euler_gap:.3g})")


PARAM_BUDGET = 2_000_000  # parameters x active points: the largest Jacobian the parameter-space check forms


def _values(m: np.ndarray, e: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore", under="ignore"):
        return np.ldexp(m, np.clip(e, -4000, 4000))


def _scaled_system(scaled: TwoLayerReLU, XA: np.ndarray, yA: np.ndarray, HM: np.ndarray, F: np.ndarray, E: np.ndarray,
                   theta: np.ndarray):
    """Stationarity ``theta = J^T lambda`` on the active points as ``b = A^T mu``: J's entries (``y_i a_j sigma_ij x_i``,
    ``y_i a_j sigma_ij``, ``y_i ReLU(z_ij)`` per block) carried as mantissas and exponents, each parameter's row divided
    by a power of two at its largest entry (R) and each point's column likewise (C); AE bounds A's rounding. Returns
    (A, AE, b, R, C)."""
    nA = len(XA)
    on = HM > 0
    m, d = scaled.W.shape
    ma, ea = np.frexp(scaled.a)
    mx, ex = np.frexp(XA)
    coef = yA[:, None] * on * ma[None, :]  # (nA, m): y_i a_j sigma_ij, mantissas (exponents ea)
    mants, exps, errs = [], [], []
    for blk in scaled.blocks:
        if blk == "W":
            mants.append((coef[:, :, None] * mx[:, None, :]).reshape(nA, m * d))
            exps.append((ea[None, :, None] + ex[:, None, :]).reshape(nA, m * d))
            errs.append(np.zeros((nA, m * d)))
        elif blk == "b":
            mants.append(coef)
            exps.append(np.broadcast_to(ea[None, :], (nA, m)))
            errs.append(np.zeros((nA, m)))
        else:  # "a": y_i ReLU(z_ij), z within its rounding bound
            mants.append(yA[:, None] * np.maximum(HM, 0.0))
            exps.append(np.broadcast_to(F[None, :], (nA, m)))
            errs.append(np.where(on, E, 0.0))
    Jm, Je, JE = np.hstack(mants), np.hstack(exps).astype(np.int64), np.hstack(errs)
    m1, e1 = np.frexp(Jm)
    Jx = np.where(Jm != 0, Je + e1, _NONE)
    mt, et = np.frexp(theta)
    R = np.maximum(Jx.max(axis=0, initial=_NONE), np.where(theta != 0, et, _NONE))
    R = np.where(R == _NONE, 0, R)
    with np.errstate(under="ignore"):
        A = np.ldexp(m1, np.maximum(Jx - R[None, :], -2000))  # |A| < 1: each parameter's row at its largest entry
        AE = np.ldexp(JE, np.maximum(Je - R[None, :], -2000)) * (1 + 4 * ULP)
        b = np.ldexp(mt, np.maximum(et - R, -2000))
    C = np.frexp(np.max(np.abs(A), axis=1, initial=0.0))[1]  # each point's column at its largest entry
    A, AE = np.ldexp(A, -C[:, None]), np.ldexp(AE, -C[:, None])
    return A, AE, b, R, C


def _multipliers(A: np.ndarray, AE: np.ndarray, b: np.ndarray, R: np.ndarray, nA: int, tol: float) -> tuple[np.ndarray, float] | None:
    """Non-negative multipliers ``mu`` of ``b = A^T mu`` and the relative residual's bound in the original metric, or None
    where the bound exceeds ``tol`` (nothing proven) or the solver fails."""
    from scipy.optimize import nnls  # heavy: scipy (loaded on first use)

    def verified(mu: np.ndarray) -> float:
        """The relative residual ``||theta - J^T lambda|| / ||theta||`` in the original metric, bounded above."""
        r = b - A.T @ mu
        bound = np.abs(r) + 2.0 * (nA + 4) * ULP * (np.abs(b) + np.abs(A).T @ mu) + AE.T @ mu + (nA + 2) * 2.0 ** -1072 * (1 + float(mu.sum()))
        G = int(np.max(R + np.frexp(np.maximum(bound, np.abs(b)))[1]))
        with np.errstate(under="ignore", divide="ignore", invalid="ignore"):
            return float(np.linalg.norm(np.ldexp(bound, R - G)) / np.linalg.norm(np.ldexp(b, R - G)))

    try:
        mu, _ = nnls(A.T, b, maxiter=50 * max(nA, 1))
        rho = verified(mu)
        keep = mu > 1e-8 * float(mu.max(initial=0.0))  # the scaled program weighs rows unlike the original metric: a
        if not rho <= tol and 0 < keep.sum() < nA:  # multiplier left at rounding level can cost much there; drop those
            mu2 = np.zeros(nA)
            mu2[keep], _ = nnls(A[keep].T, b, maxiter=50 * max(nA, 1))
            rho2 = verified(mu2)
            if rho2 < rho:
                mu, rho = mu2, rho2
    except RuntimeError:
        return None
    return (mu, rho) if rho <= tol else None


def _parameter_space(net: TwoLayerReLU, X: np.ndarray, y: np.ndarray, qmin_orig: float, active_tol: float, tie_tol: float,
                     tol: float = 1e-6) -> KKTCertificate | None:
    """A certificate in parameter space, on X as given, for where the engine's Gram-space program cannot hold the data
    in float64 (columns far apart, parameters at unit margin past 2^500 on the data at unit scale): a KKT point of (P),
    or None (nothing proven either way).

    At the network at unit margin on X itself, with no tie (every active pre-activation's sign decided by float64 and
    farther than ``tie_tol`` of its neuron's own terms from 0), stationarity is ``theta = J^T lambda``, lambda >= 0 on
    the active points: a non-negative least squares. Each entry of J and theta is carried as a mantissa and an exponent,
    each parameter's row divided by a power of two at its largest entry and each point's column likewise (the same
    solutions: an exact system has the same nonnegative solutions after positive row and column scalings), so a
    column 2^1000 below another keeps its digits. The residual is then bounded in the original metric, coordinate by
    coordinate with every rounding, and the network is certified only where that bound is at most ``tol`` (with
    complementary slackness, feasibility and Euler's identity checked as the engine's certificate does). A residual
    above tol proves nothing (other multipliers may do better), so this never says "not certified"."""
    if net.b is not None and "b" not in net.trained:
        return None
    qm, qe, _ = margin_parts(net, X, y)
    if not np.all(qm > 0):
        return None
    i = int(np.argmin(qe + np.log2(qm)))
    mq, eq = np.frexp(qm[i])
    theta = _theta_at_unit_margin(net, float(mq), int(qe[i]) + int(eq))
    top = float(np.max(np.abs(theta), initial=0.0))
    if not (np.isfinite(theta).all() and 0 < top < 2.0 ** 500):
        return None
    scaled = net.with_params(theta)
    qm2, qe2, em2 = margin_parts(scaled, X, y)
    if np.any(qm2 - em2 <= 0):
        return None
    q = _values(qm2, qe2)
    active = np.flatnonzero(q <= 1 + active_tol)
    P, nA = theta.size, len(active)
    if not nA or P * nA > PARAM_BUDGET:
        return None
    XA, yA = X[active], y[active]
    HM, F, E = preactivation_parts(scaled.W, scaled.b, XA)
    HA, _, _ = preactivation_parts(np.abs(scaled.W), None if scaled.b is None else np.abs(scaled.b), np.abs(XA))  # same exponents
    if np.any(np.abs(HM) <= np.maximum(E, tie_tol * HA)):
        return None  # a tie, or a sign float64 does not decide: the Clarke cone is the engine's
    A, AE, b, R, C = _scaled_system(scaled, XA, yA, HM, F, E, theta)
    found = _multipliers(A, AE, b, R, nA, tol)
    if found is None:
        return None
    mu, rho = found
    lam = np.zeros(len(X))
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        lam[active] = np.ldexp(mu, -C)
        tn = float(np.linalg.norm(theta))
        L = scaled.degree
        euler = abs(L * float(lam.sum()) - tn ** 2) / tn ** 2
        cs = float(np.max(lam * (q - 1)))
    if not (np.isfinite(lam).all() and euler <= EULER_TOL):
        return None
    cert = KKTCertificate(solver_status="optimal", stationarity_residual=rho, stationarity_abs=rho * tn, complementary_slackness=cs,
                          feasible=bool(q.min() >= 1 - 1e-9), min_margin=qmin_orig, normalized_margin=float(q.min() / tn ** L),
                          euler_gap=euler, n_active=nA, n_ties=0, lam=lam, scaled=scaled, eps_relu0=rho, eps_relu1=rho)
    return cert if cert.is_kkt(tol) else None


def _or_parameter_space(cert: KKTCertificate, net: TwoLayerReLU, X: np.ndarray, y: np.ndarray, active_tol: float,
                        tie_tol: float) -> KKTCertificate:
    """A "not proven" certificate (past what the Gram-space program holds in float64) replaced by
    :func:`_parameter_space`'s where that proves a KKT point; a margin float64 cannot decide stays not proven."""
    if cert.is_kkt() or not cert.solver_status.startswith("not proven") or "within float64 resolution" in cert.solver_status:
        return cert
    found = _parameter_space(net, X, y, cert.min_margin, active_tol, tie_tol)
    return found if found is not None else cert


def certificate_at_any_scale(net: TwoLayerReLU, X: np.ndarray, y: np.ndarray, active_tol: float = 1e-6,
                             tie_tol: float = 1e-9) -> KKTCertificate:
    """LL20.def.kkt certified at ``net`` on ``X, y`` at any scale: :func:`_unit_margin` (the network at unit margin in
    normalized units, or a "not proven" certificate), then the engine's certificate on it, its ``min_margin`` the
    network's own, :func:`_gram_resolution`, :func:`_data_loss` and :func:`_euler`; where those say "not proven",
    :func:`_parameter_space` may still prove a KKT point. A misclassification is refused (InputError) only
    where a margin <= 0 is proven beyond its rounding error."""
    require_homogeneous(net)
    X = np.asarray(X, float)
    y = np.asarray(y, float)
    unit = _unit_margin(net, X, y)
    if isinstance(unit, KKTCertificate):
        return _or_parameter_space(unit, net, X, y, active_tol, tie_tol)
    scaled, Xu, qmin_orig = unit
    try:
        with np.errstate(all="ignore"):  # the program's own overflows end in a failed certificate, judged below
            cert = kkt_certificate(scaled, Xu, y, active_tol=active_tol, tie_tol=tie_tol)
    except InputError as err:  # the margins were proven positive above: a unit scaling that underflows, not a misclassification
        if "misclassifies" not in str(err):
            raise
        cert = _failed(f"not proven: the margins are positive (q_min = {qmin_orig:.3g}), but at unit parameter scale they "
                       "underflow float64", scaled, qmin_orig, 0, 0)
        return _or_parameter_space(cert, net, X, y, active_tol, tie_tol)
    at = cert.scaled if cert.scaled is not None else scaled
    cert = _gram_resolution(at, Xu, replace(cert, min_margin=qmin_orig))
    return _or_extended(_or_parameter_space(_euler(_data_loss(X, Xu, at, cert)), net, X, y, active_tol, tie_tol), net, X, y)


@dataclass(frozen=True)
class ExtendedCertificate(KKTCertificate):
    """A certificate evaluated in extended precision (:func:`.extended.certify_near`): a KKT point of (P) lies at
    relative ``distance`` (in (P)'s units) from the network, where float64 cannot evaluate the conditions; it holds
    when that point's conditions and the distance are all within the tolerance."""

    distance: float = float("nan")
    digits: int = 0

    def failures(self, tol: float = 1e-6) -> list[str]:
        if self.solver_status != EXTENDED:
            return super().failures(tol)
        out = [] if self.distance <= tol else [f"the nearest KKT point on the network's face is at relative distance {self.distance:.3g} > {tol:g}"]
        if not self.stationarity_residual <= tol:
            out.append(f"stationarity residual {self.stationarity_residual:.3g} > {tol:g} (extended precision)")
        if not self.complementary_slackness_rel <= tol:
            out.append(f"complementary slackness {self.complementary_slackness_rel:.3g} > {tol:g} (extended precision)")
        return out


def _or_extended(cert: KKTCertificate, net: TwoLayerReLU, X: np.ndarray, y: np.ndarray) -> KKTCertificate:
    """A "not proven" certificate on data far below unit scale beside a trained bias (float64 cannot hold the bias's
    stationarity: its terms are 1/s times their sum) replaced by the extended-precision one where that holds (or says
    why not, beside the float64 reason)."""
    if cert.is_kkt() or "beside a trained bias" not in cert.solver_status or net.b is None or net.degree != 2:
        return cert
    e = exponent(X) or 0
    if e >= 0:
        return cert
    sp = certify_near(net, X, y, e)
    if sp.certified and (sp.multipliers is None or not np.all(np.isfinite(sp.multipliers))):
        return replace(cert, solver_status=f"{cert.solver_status}; in extended precision the conditions hold, but (P)'s "
                       f"multipliers at 2^{e} are beyond float64's range")
    if not sp.certified or sp.net is None or sp.multipliers is None or sp.face is None:
        return replace(cert, solver_status=f"{cert.solver_status}; in extended precision: {sp.reason}")
    lam = np.zeros(len(y))
    lam[list(sp.face.active)] = sp.multipliers
    tn2 = 2.0 * sp.value
    return ExtendedCertificate(EXTENDED, sp.residual, sp.residual * math.sqrt(tn2), sp.slackness * float(np.sum(lam)), True,
                               cert.min_margin, 1.0 / tn2 if tn2 > 0 else float("nan"), 0.0, sp.active, sp.ties, lam, sp.net,
                               distance=sp.distance, digits=sp.digits)
