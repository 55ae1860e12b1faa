"""Confirmation by an intersection-union test: is the claim told apart from every near alternative along a variable?

Takes the cells of one bound's ratio fit (per cell: the mean log ratio ``r = log y - log g(x)``, its seeds and their
sd, each variable's log), the variable to confirm along and the bound's kind; returns
a :class:`Confirmation`: per alternative its statistic, its bootstrap p and whether it is rejected, and ``confirmed``
where every alternative is.

The models, along the variable v (u its log toward its limit; the other variables enter as free linear nuisance
terms, their power regressors, in every model):

* the claim (H0), with corrections to scaling: ``r = a + log F(x)``, ``F = (1 + q x^-w)^p`` (p in 1/2, 1, 2) or
  ``exp(q x^-w)``, ``w >= MIN_DECAY`` (0.3), q within the engine's cap (a factor FIRST at the smallest x, 1 -+ LAST
  at the largest), q = 0 included;
* the alternatives (each with corrections of its own, the same family): the claim times a log factor,
  ``r = a +- gamma log u + log F``, and times a power, ``r = a +- delta u + log F``, each as far over the range as a
  factor of log log x (:func:`targets`, the resolution rule's own target), then that factor itself,
  ``r = a +- log log u + log F``, then a whole log factor and the power that moves as far as one; an ``O`` bound
  forbids only the rising ones, ``Omega`` only the falling ones, ``Theta`` both.

The statistic of one alternative A is ``T = (RSS_A - RSS_0) / s^2``, each RSS the least over its family's members
(weighted by the cells' seeds), s^2 the seeds' pooled variance. It is calibrated by a parametric bootstrap at the
nearest false curve: A's member nearest to the claim's fit (the hardest to tell from it), its nuisance terms fitted on
the data, cell means drawn around it with the seeds' noise and s^2 drawn from its chi^2. A is rejected where ``P*(T* >= T) <= alpha``.

Why it is valid with no multiplicity correction: "consistent" rejects the union of the alternatives only where each one
is rejected, so its error rate under any one alternative is at most that alternative's own level (Berger 1982). Where the
null family fits badly (a correction outside it), RSS_0 is large and nothing is rejected: misspecification costs
power. Where neither describes the data (cells the claim's form does not follow, a saturation outside a window), both
RSS are large and their difference says nothing, so nothing is confirmed where the claim's model lacks fit against the
seeds' own noise (an F test at FIT_LEVEL).

Pitfall avoided: confirming by the resolution alone (a deviation of a log log factor detected with 95% power, the
slope fitted with no correction): a true claim with a slow correction, ``sqrt(d) (1 + 5 d^-0.3)``, moves its ratio as
far as a log log factor does, so it was never confirmed (0 of 100 trials over d = 2^6..2^16).
"""
from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import stats

from ibcheck.simulate.stats.ratio import FORMS, MIN_DECAY, Alternative, _residualizer
from ibcheck.simulate.stats.separation import _log_factor, _within_cap
from ibcheck.simulate.verdict.rules import LOWER, UPPER

W_GRID = tuple(round(MIN_DECAY + 0.1 * i, 2) for i in range(28))  # w in [0.3, 3.0]
Q_GRID = np.geomspace(1e-3, 1e4, 71)  # |q|, 10 per decade
BOOT = 299  # bootstrap draws per alternative
FIT_LEVEL = 0.01  # the claim's model must describe the data: a lack of fit below this level confirms nothing
MIN_VALUES = 5  # distinct values of the variable below which no alternative can be rejected (3 parameters per model)


@dataclass(frozen=True)
class AlternativeTest:
    """One alternative's test: the factor it multiplies the claim by, its statistic and bootstrap p."""

    name: str  # "(log d)^+1", "d^-0.05"
    statistic: float  # (RSS_alternative - RSS_claim) / s^2
    p: float
    rejected: bool
    member: str  # the alternative's member nearest to the claim's fit (the curve the bootstrap draws from)

    def as_json(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True)
class Confirmation:
    """The intersection-union test along one variable (see the module docstring)."""

    variable: str
    alpha: float
    tests: tuple[AlternativeTest, ...]
    claim_member: str  # the claim's best member (its correction to scaling)
    noise_df: int
    draws: int = BOOT
    p_fit: float = math.nan  # the claim's model against the seeds' own noise (lack of fit, F test)
    sizes: tuple[float, float] = (math.nan, math.nan)  # the target alternatives' exponents: (log x)^gamma and x^delta
    sides: str = "+-"  # the sides tested: "+" (an O bound), "-" (Omega) or both

    def margin(self) -> str:
        """The smallest deviations excluded, ``(log d)^+-0.53 and d^+-0.076``."""
        s = "±" if len(self.sides) == 2 else self.sides
        return f"(log {self.variable})^{s}{self.sizes[0]:.2g} and {self.variable}^{s}{self.sizes[1]:.2g}"

    @property
    def fits(self) -> bool:
        """Does the claim's model, with its corrections, describe the data (no lack of fit at FIT_LEVEL)?"""
        return not self.p_fit < FIT_LEVEL

    @property
    def confirmed(self) -> bool:
        return self.fits and bool(self.tests) and all(t.rejected for t in self.tests)

    def text(self) -> str:
        return ", ".join(f"{t.name} (p = {_p_text(t.p, self.draws)})" for t in self.tests)

    def as_json(self) -> dict:
        return {"variable": self.variable, "alpha": self.alpha, "confirmed": self.confirmed, "claim_member": self.claim_member,
                "p_fit": self.p_fit, "fits": self.fits, "margin": self.margin(),
                "noise_df": self.noise_df, "draws": self.draws, "alternatives": [t.as_json() for t in self.tests],
                "test": "intersection-union: every alternative (a log factor and a power, each as far as a factor of log log x "
                        "over the range, then a whole log factor and its power, each with corrections to scaling w >= 0.3 within "
                        "the cap) rejected at alpha by a parametric bootstrap at its member nearest to the claim's fit"}


def _p_text(p: float, draws: int) -> str:
    return f"< {1 / (draws + 1):.2g}" if p <= 1 / (draws + 1) + 1e-12 else f"{p:.2g}"


@lru_cache(maxsize=64)
def _members(xs: tuple[float, ...]) -> tuple[np.ndarray, np.ndarray]:
    """Every correction ``log F`` at the distinct values ``xs`` (sorted ascending, toward the limit), laid out as
    ``[w, form, sign, q, x]`` (W_GRID, FORMS, +-, Q_GRID), nan where a member leaves the cap; and the same layout's
    validity mask (the last axis dropped)."""
    x = np.array(xs)
    out = np.full((len(W_GRID), len(FORMS), 2, len(Q_GRID), len(x)), np.nan)
    for i, w in enumerate(W_GRID):
        z = x ** -w
        for j, (form, p) in enumerate(FORMS):
            for k, sign in enumerate((1.0, -1.0)):
                f = _log_factor(form, p, sign * Q_GRID, z)  # the engine's cap, as the envelope applies it
                ok = _within_cap(form, f)
                out[i, j, k, ok] = f[ok]
    return out, np.isfinite(out).all(axis=-1)


def _label(idx: tuple[int, int, int, int]) -> tuple:
    i, j, k, m = idx
    form, p = FORMS[j]
    return (form, p, W_GRID[i], (1.0, -1.0)[k] * float(Q_GRID[m]))


def _member_text(label: tuple | None, v: str, base: str) -> str:
    if label is None:
        return base or "c"
    form, p, w, q = label
    if form == "additive":
        corr = f"exp({q:.3g} {v}^-{w:g})"
    else:
        corr = f"(1 {'+' if q >= 0 else '-'} {abs(q):.3g} {v}^-{w:g})" + ("" if p == 1 else f"^{p:g}")
    return f"{base + ' ' if base else ''}c {corr}"


def _refine(f: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """The least of ``f`` along ``axis`` (inf where undefined), refined by a parabola through the best grid point and
    its neighbours where both are defined and the parabola is convex (so the grid's spacing does not bias a fit by
    where the truth falls between its points); and the grid argmin. (The axis is reduced as the last one: along a
    contiguous axis numpy's argmin is several times faster than across one.)"""
    f = np.moveaxis(f, axis, -1)
    n = f.shape[-1]
    j = np.argmin(f, axis=-1)
    best = np.take_along_axis(f, j[..., None], -1)[..., 0]
    lo = np.take_along_axis(f, np.clip(j - 1, 0, n - 1)[..., None], -1)[..., 0]
    hi = np.take_along_axis(f, np.clip(j + 1, 0, n - 1)[..., None], -1)[..., 0]
    return _parabola(best, lo, hi, j, n), j


def _parabola(best: np.ndarray, lo: np.ndarray, hi: np.ndarray, j: np.ndarray, n: int) -> np.ndarray:
    """:func:`_refine`'s step: the least of the parabola through a grid minimum ``best`` (at index ``j`` of ``n``) and
    its neighbours ``lo`` and ``hi``, where both are defined and it is convex; else ``best`` (never below 0)."""
    inner = (j > 0) & (j < n - 1) & np.isfinite(lo) & np.isfinite(hi) & np.isfinite(best)
    curv = np.where(inner, hi - 2 * best + lo, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        drop = np.where(inner & (curv > 0), (hi - lo) ** 2 / (8 * curv), 0.0)
    return np.maximum(best - drop, 0.0)


class _Family:
    """One model's members on the cells, residualized on the nuisance columns: the least RSS of any response, over
    q = 0 and the grid of corrections, refined between grid points in q and in w.

    A member's curve is its correction at the variable's distinct values, expanded to the cells (``E G``, E the cells'
    indicator of their value), plus the model's ``shift``; its inner product with a residualized response ``MY = P S Y``
    is ``C' S MY`` (P, the residualizer, is a symmetric projector and ``P MY = MY``), that is ``(E' S MY)' G'`` plus the
    shift's own term: a product over the distinct values, not the cells, and the same for every model on the grid
    (:meth:`cross`), so the bootstrap forms it once per draw. RSS arrays are laid out response columns x members, so
    that the reductions over q run along contiguous memory."""

    def __init__(self, grid: np.ndarray, valid: np.ndarray, at: np.ndarray, shift: np.ndarray, resid, sw: np.ndarray,
                 buffers: dict[int, np.ndarray] | None = None):
        self.shape = valid.shape
        self.valid = valid.reshape(-1)
        self.at, self.sw, self.shift = at, sw, shift
        self.G = np.vstack([np.zeros((1, grid.shape[-1])), np.nan_to_num(grid.reshape(-1, grid.shape[-1]))])  # members x values
        self.curves = self.G[:, at] + shift[None, :]  # row 0: no correction
        MF = resid((sw[None, :] * self.curves).T)  # cells x members
        self.norms = np.einsum("ij,ij->j", MF, MF)
        self.norms[1:][~self.valid] = np.inf  # a member outside the cap: inf RSS, set once here rather than per call
        # per batch size, the RSS array, reused (a fresh one costs its page faults); shared by the families of one test,
        # which run one after another
        self._buffers: dict[int, np.ndarray] = {} if buffers is None else buffers

    def cross(self, MY: np.ndarray) -> np.ndarray:
        """``(E' S MY)' G'``: each residualized response column against every member's correction (columns x members),
        the part of ``MY' MF`` every model on this grid shares."""
        Z = np.zeros((self.G.shape[1], MY.shape[1]))
        np.add.at(Z, self.at, self.sw[:, None] * MY)
        return Z.T @ self.G.T

    def rss(self, MY: np.ndarray, cross: np.ndarray | None = None) -> np.ndarray:
        """RSS per response column (rows) and member (columns; invalid members inf); ``cross``: :meth:`cross` of ``MY``,
        where the caller has it. Formed in place, in this family's buffer for the batch size (valid until the next
        call): the arrays are large and the work is memory-bound."""
        cross = self.cross(MY) if cross is None else cross
        buf = self._buffers.get(cross.shape[0])
        if buf is None:
            buf = self._buffers[cross.shape[0]] = np.empty(cross.shape)
        q = np.multiply(cross, -2.0, out=buf)
        q += (-2.0 * (self.shift @ (self.sw[:, None] * MY)) + np.einsum("ij,ij->j", MY, MY))[:, None]
        q += self.norms[None, :]  # inf for the members outside the cap (the rest is finite: G has no nan)
        np.maximum(q, 0.0, out=q)
        return q

    def least(self, MY: np.ndarray, members: bool = True, cross: np.ndarray | None = None) -> tuple[np.ndarray, list]:
        """(least RSS per response column, refined; the grid member reaching it per column: None for q = 0, else its
        (w, form, sign, q) index; ``members=False``: no members, an empty list, as the bootstrap's draws need none)."""
        q = self.rss(MY, cross)
        B, n = q.shape[0], self.shape[-1]
        grid = q[:, 1:].reshape(B, -1, n)  # B, (w, form, sign), q
        jq = np.argmin(grid, axis=-1)
        # _refine along q, its neighbours read from q's own memory (take_along_axis on the 5-d view costs more)
        at = (np.arange(B) * q.shape[1])[:, None] + 1 + (np.arange(grid.shape[1]) * n)[None, :] + jq
        flat_q = q.reshape(-1)
        over_q = _parabola(flat_q[at], flat_q[np.where(jq > 0, at - 1, at)], flat_q[np.where(jq < n - 1, at + 1, at)], jq, n)
        over_q, jq = over_q.reshape(B, *self.shape[:-1]), jq.reshape(B, *self.shape[:-1])  # B, w, form, sign
        over_w, jw = _refine(over_q, 1)  # B, form, sign
        flat = over_w.reshape(B, -1)
        jf = np.argmin(flat, axis=1)
        best = flat[np.arange(B), jf]
        out = np.minimum(best, q[:, 0])
        where: list[tuple[int, int, int, int] | None] = []
        for b in range(B if members else 0):
            if q[b, 0] <= best[b]:
                where.append(None)
                continue
            j, k = divmod(int(jf[b]), 2)
            i = int(jw[b, j, k])
            where.append((i, j, k, int(jq[b, i, j, k])))
        return out, where

    def curve(self, idx) -> np.ndarray:
        if idx is None:
            return self.curves[0]
        return self.curves[1 + int(np.ravel_multi_index(idx, self.shape))]


def targets(u_min: float, u_max: float) -> tuple[float, float]:
    """The alternatives' sizes over ``u = log x`` in [u_min, u_max]: the log factor ``(log x)^gamma`` and the power
    ``x^delta`` that each move the ratio as far as a factor of ``log log x`` does over the range (the engine's own
    target, :func:`simulate.verdict.function_test.targets`): ``gamma = [L2(u_max) - L2(u_min)] / [L(u_max) - L(u_min)]``
    and ``delta = [L2(u_max) - L2(u_min)] / (u_max - u_min)``, L = log and L2 = log log (lifted, ``log(1 + .)``, where the
    range starts at or below 1, as the alternatives are). Over d = 2^6..2^16: (log d)^0.53 and d^0.076."""
    lift = u_min <= math.e

    def L(x: float) -> float:
        return math.log1p(max(x, 0.0)) if lift else math.log(x)

    dl, dl2 = L(u_max) - L(u_min), L(L(u_max)) - L(L(u_min))
    return (dl2 / dl if dl > 0 else math.nan), (dl2 / (u_max - u_min) if u_max > u_min else math.nan)


def _batches(draws: int, first: int = 59) -> list[int]:
    """The bootstrap's draws in batches: a first one of ``first``, then the rest."""
    return [min(first, draws)] + ([draws - first] if draws > first else [])


def _alternatives(v: str, tz: bool, kind: str, good: list[dict], values: list[float], gamma: float, delta: float) -> list[tuple]:
    """The alternatives (name, shift of the ratio per cell, base name), nearest first: the target sizes, the log-log
    factor itself, then a whole log factor and the power that moves as far as one; each side the kind forbids."""
    u = np.array([(-1.0 if tz else 1.0) * c["log_" + v] for c in good])
    lift = min(values) <= 1.0  # as the engine's log alternatives are lifted (simulate.stats.ratio.alternatives)
    log_u = np.array([Alternative(v, 1, tz, lift=lift).regressor(c["log_" + v]) for c in good])
    # the target sizes, and a whole log factor and the power that moves as far as one (farther alternatives: rejecting
    # the near ones does not always reject them once corrections are fitted)
    whole = (math.log1p(values[-1]) - math.log1p(values[0]) if lift else math.log(values[-1]) - math.log(values[0])) / (values[-1] - values[0])
    logs = [(f"(log {v})^{{s}}{g:.2g}", g * log_u) for g in dict.fromkeys((round(gamma, 6), 1.0))]
    powers = [(f"{v}^{{s}}{x:.2g}", x * u) for x in dict.fromkeys((round(delta, 6), round(max(whole, delta), 6)))]
    sides = [(sign, side) for sign, side in ((1.0, "+"), (-1.0, "-")) if not ((sign > 0 and kind in LOWER) or (sign < 0 and kind in UPPER))]
    # the nearest alternatives first (the targets, then the farther ones), each side in turn: the test stops at the first
    # one it does not reject (the claim is then not confirmed, whatever the rest would say)
    # a whole log-log factor too: "no deviation as large as a factor of log log x" must reject log log x itself, and a
    # log power of the same reach is not that function: sqrt(d) log log d over d = 2^6..2^13 at 59 seeds per cell was
    # confirmed in 4 of 30 trials, (log d)^+0.56 rejected (p 0.007-0.02) while the claim's fit c (1 - 1.58 d^-0.3) took
    # up the log log d that no (log d)^gamma member matched
    loglog_u = np.array([Alternative(v, 2, tz, lift=lift).regressor(c["log_" + v]) for c in good])
    order = [logs[0], powers[0], (f"(log log {v})^{{s}}1", loglog_u)] + logs[1:] + powers[1:]
    return [(name.replace("{s}", side), sign * shift, name.replace("{s}", side)) for name, shift in order for sign, side in sides]


def confirm(cells: list[dict], variable: str, kind: str, variables: list[str], toward_zero: frozenset[str] = frozenset(),
            alpha: float = 0.05, draws: int = BOOT, sizes: tuple[float, float] | None = None, every: bool = False) -> Confirmation | None:
    """The intersection-union test along ``variable`` (see the module docstring): ``kind`` "O" (rising alternatives),
    "Omega" (falling) or "Theta" (both); ``sizes`` the log factor's and the power's exponents to exclude (by default
    :func:`targets` over the cells' range: each as far as a factor of log log x). None where it cannot run: fewer than
    MIN_VALUES values of the variable, no seed noise (a cell of one seed everywhere), or undefined cells. The
    alternatives run nearest first and the test stops at the first it does not reject (``every``: run them all)."""
    v = variable
    tz = v in toward_zero
    good = [c for c in cells if math.isfinite(c.get("mean_log", math.nan)) and math.isfinite(c.get("log_" + v, math.nan))]
    pure_df = sum(int(c.get("n_seeds") or 1) - 1 for c in good if c.get("sd_log") is not None)
    if len(good) < len(cells) or pure_df < 2:
        return None
    pure = sum((int(c["n_seeds"]) - 1) * float(c["sd_log"]) ** 2 for c in good if c.get("sd_log") is not None) / pure_df
    u = np.array([(-1.0 if tz else 1.0) * c["log_" + v] for c in good])
    values = sorted(set(np.round(u, 12)))
    if len(values) < MIN_VALUES or not pure > 0:
        return None
    gamma, delta = targets(values[0], values[-1]) if sizes is None else sizes
    if not all(math.isfinite(x) and x > 0 for x in (gamma, delta)):
        return None
    xs = tuple(float(math.exp(x)) for x in values)  # toward the limit, ascending
    grid, valid = _members(xs)
    at = np.asarray(np.searchsorted(np.array(values), np.round(u, 12)))
    n = np.array([max(int(c.get("n_seeds") or 1), 1) for c in good], dtype=float)
    sw = np.sqrt(n)
    others = [w for w in variables if w != v]
    X = np.hstack([np.ones((len(good), 1))] + [np.array([[c["log_" + w]] for c in good], dtype=float) for w in others])
    if not np.all(np.isfinite(X)) or len(good) <= X.shape[1] + 3:
        return None
    resid = _residualizer(X, sw)
    r = np.array([c["mean_log"] for c in good], dtype=float)
    alts = _alternatives(v, tz, kind, good, values, gamma, delta)
    buffers: dict[int, np.ndarray] = {}
    null = _Family(grid, valid, at, np.zeros(len(good)), resid, sw, buffers)
    MY = resid((sw * r)[:, None])
    g0 = null.cross(MY)
    rss0, j0 = null.least(MY, cross=g0)
    df_fit = len(good) - X.shape[1] - 3  # the claim's model: the nuisance columns, and the correction's form, w and q
    p_fit = float(stats.f.sf((rss0[0] / df_fit) / pure, df_fit, pure_df)) if df_fit > 0 else math.nan
    seed = int.from_bytes(hashlib.sha256(np.round(r, 10).tobytes() + v.encode()).digest()[:8], "little")
    rng = np.random.default_rng(seed)
    tests = []
    for name, shift, base in alts:
        fam = _Family(grid, valid, at, shift, resid, sw, buffers)
        rss1, _ = fam.least(MY, cross=g0)
        stat = float((rss1[0] - rss0[0]) / pure)
        # the nearest false curve: the alternative's member nearest to the claim's fit (the hardest to tell from it),
        # its nuisance terms fitted on the data
        _, jn = fam.least(resid((sw * null.curve(j0[0]))[:, None]))
        f1 = fam.curve(jn[0])
        fitted = r - resid((sw * (r - f1))[:, None])[:, 0] / sw
        above, done = 0, 0
        for size in _batches(draws):  # Besag and Clifford: stop drawing once p is surely above alpha
            Y = fitted[:, None] + rng.standard_normal((len(good), size)) * math.sqrt(pure) / sw[:, None]
            s2 = pure * rng.chisquare(pure_df, size) / pure_df
            MYb = resid(sw[:, None] * Y)
            gb = null.cross(MYb)
            tb = (fam.least(MYb, members=False, cross=gb)[0] - null.least(MYb, members=False, cross=gb)[0]) / s2
            above, done = above + int(np.sum(tb >= stat - 1e-12)), done + size
            if (1 + above) / (draws + 1) > alpha and not every:
                break
        p = float((1 + above) / (done + 1))
        tests.append(AlternativeTest(name, stat, p, p <= alpha and done == draws, _member_text(None if jn[0] is None else _label(jn[0]), v, base)))
        if not tests[-1].rejected and not every:
            break
    return Confirmation(v, alpha, tuple(tests), _member_text(None if j0[0] is None else _label(j0[0]), v, ""), pure_df, draws, p_fit, (gamma, delta),
                        "".join(side for sign, side in ((1, "+"), (-1, "-")) if not ((sign > 0 and kind in LOWER) or (sign < 0 and kind in UPPER))))
