"""The public Python API: one call per capability, each returning a frozen dataclass.

Every result has ``to_json()``, ``_repr_html_()`` (a notebook shows its table and plot inline)
and ``save(directory)``; computing never writes files. Arguments are Python values
(``at={"k": 10, "n": 1000}``), checked here or in the layer below, with errors that name the
parameter and the accepted range (:class:`ibcheck.errors.InputError`, a ``ValueError``).

Importing this module loads neither torch nor cvxpy; each call imports what it needs.
"""
from __future__ import annotations

import difflib
import functools
import inspect
import numbers
import os
import sys
import tempfile
import time
import warnings
from dataclasses import replace
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import TYPE_CHECKING, Callable, Literal, Mapping, Sequence

import numpy as np

from ibcheck.solvers.networks import normalized_margin as _nm
from ibcheck.solvers.validation import check_data, check_network, check_X
from ibcheck.theory.argtypes import refused, require_bool, require_choice, require_float, require_int
from ibcheck.theory.describe import bounds_at
from ibcheck.theory.evaluate import MAX_DECIMAL_EXPONENT
from ibcheck.theory.expressions import parse_expression
from ibcheck.theory.growth import GrowthError
from ibcheck.theory.growth import compare as compare_growth
from ibcheck.theory.outdir import check_out
from ibcheck.theory.registry import ClaimList, all_claims, get_claim
from ibcheck.theory.variables import tends_to_zero
from ibcheck.theory.window import applicability_window

from .errors import InputError

if TYPE_CHECKING:
    import numpy as np

    from ibcheck.simulate.compare.calibrate import Calibration
    from ibcheck.simulate.compare.probability import ProbabilityComparison
    from ibcheck.simulate.compare.result import ComparisonResult
    from ibcheck.simulate.experiments.window import WindowDesign
    from ibcheck.simulate.reproductions import Reproduction
    from ibcheck.simulate.substrate.training import Run, RunConfig
    from ibcheck.simulate.tools.kkt_search import KKTPoints, KKTSearchConfig, KKTTrajectory
    from ibcheck.simulate.tools.radii import Direction, Radii
    from ibcheck.solvers.kkt.certificate import KKTCertificate
    from ibcheck.solvers.kkt.global_opt import GlobalOptimum
    from ibcheck.solvers.radius.bracket import Method
    from ibcheck.theory.claim import Claim
    from ibcheck.theory.describe import Bounds
    from ibcheck.theory.growth import GrowthRelation
    from ibcheck.theory.registry import ClaimList
    from ibcheck.theory.window import Window

Number = int | float | Fraction | str


def _point(at: Mapping[str, Number] | None, name: str = "at") -> dict[str, str]:
    """``{"k": 10, "eps": 0.1}`` -> ``{"k": "10", "eps": "0.1"}`` (the exact decimal text the theory layer reads)."""
    if at is None:
        return {}
    if not isinstance(at, Mapping):
        raise InputError(f"{name}={at!r} is not a mapping: give values as a dict, e.g. {name}={{'k': 10, 'n': 1000}}")

    out = {}
    for k, v in at.items():
        if not isinstance(k, str):
            raise InputError(f"{name} key {k!r} is not a variable name (a string such as 'd')")
        if isinstance(v, bool) or type(v).__name__ == "bool_" or not isinstance(v, (numbers.Real, str)):
            raise InputError(f"{name}[{k!r}]={v!r} is not a number")
        if isinstance(v, numbers.Integral):
            v = int(v)  # numpy integers too
        elif isinstance(v, numbers.Real) and not isinstance(v, Fraction):
            v = float(v)
            if v != v or v in (float("inf"), float("-inf")):
                raise InputError(f"{name}[{k!r}]={v!r} is out of range: a value must be a finite number")
        if isinstance(v, Fraction):
            if v.denominator == 1:
                out[k] = str(v.numerator)
                continue

            if max(len(str(abs(v.numerator))), len(str(v.denominator))) > MAX_DECIMAL_EXPONENT:
                raise InputError(f"{name}[{k!r}]: the fraction has too many digits")
            # the exact value as a decimal the theory layer reads (40 significant digits)

            with localcontext() as ctx:
                ctx.prec = 40
                out[k] = str(Decimal(v.numerator) / Decimal(v.denominator))
            continue
        out[k] = repr(v) if isinstance(v, float) else str(v)
    return out


def _text(name: str, value, optional: bool = False) -> str | None:
    """A non-empty string (or None when ``optional``); else an InputError naming the parameter."""
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{name}={value!r} is not accepted: {name} must be a non-empty string")
    return value


def _names(name: str, value) -> list[str]:
    """A list of variable names; a single string is one name."""
    if isinstance(value, str):
        return [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise InputError(f"{name}={value!r} is not a list of variable names, e.g. {name}=['d', 'k']")
    return list(value)


def _sequence(name: str, value, allow_empty: bool = False) -> list:
    """A list or tuple (a string is not a sequence of values here); else an InputError naming it."""
    if isinstance(value, np.ndarray) and value.ndim == 1:
        value = value.tolist()
    if not isinstance(value, (list, tuple)):
        raise InputError(f"{name}={value!r} is not a list: give e.g. {name}=[...]")
    out = list(value)
    if not out and not allow_empty:
        raise InputError(f"{name}=[] is empty: give at least one value")
    return out


def _input_dim(net) -> int | None:
    W = getattr(net, "W", None)
    if W is not None:
        return int(W.shape[1])
    w = getattr(net, "w", None)
    return int(len(w)) if w is not None else None


# -- theory ------------------------------------------------------------------------------------
def claims() -> ClaimList:
    """Every claim of the registry (THEORY.md), in order: a table of id, status, kind and title."""
    return ClaimList(tuple(all_claims()))


def claim(id: str) -> Claim:
    """The claim with this id (e.g. ``"FVBS23.thm.4_2"``); an unknown id suggests the nearest ones."""
    return get_claim(id)


def bounds(id: str, at: Mapping[str, Number] | None = None, reading: str | None = None) -> Bounds:
    """A claim's hypotheses and bounds with their exponents; at a point ``at`` each hypothesis is
    evaluated in log space (exact for super-polynomial conditions) and ``applies`` says whether all hold."""
    return bounds_at(claim(id), _point(at) or None, _text("reading", reading, optional=True))


def window(id: str, free: str = "d", at: Mapping[str, Number] | None = None) -> Window:
    """The exact window of ``free`` where every hypothesis of the claim holds, the other variables fixed by ``at``:
    integer intervals for an integer variable, each end checked one step inside and one step outside (an equality
    point decided exactly); real intervals for a real one, each end a root checked a relative 1e-10 either side."""
    return applicability_window(claim(id), _text("free", free), _point(at))


def growth(a: str, b: str, over: Sequence[str] | None = None, to_zero: Sequence[str] | None = None,
           coupling: Mapping[str, str] | None = None) -> GrowthRelation:
    """How bound ``a`` compares with bound ``b`` as the variables ``over`` tend to infinity (and
    ``to_zero`` to 0) jointly: ``<`` (a = o(b)), ``>``, ``~`` (Theta) or ``incomparable`` with two rays.
    By default each variable goes where the registry's convention sends it: eps, delta and gamma to 0, the rest
    to infinity (``growth("eps", "eps**2")`` is ``>``: eps^2 = o(eps) as eps -> 0); a variable named in ``over``
    grows whatever its convention."""
    ea, eb = parse_expression(_text("a", a)), parse_expression(_text("b", b))
    names = sorted({s.name for s in (ea.free_symbols | eb.free_symbols)})
    if to_zero is None:  # the variables' own direction, unless the caller names them in over
        named_over = set(_names("over", over)) if over is not None else set()
        zero = [n for n in names if n not in named_over and tends_to_zero(n)]
    else:
        zero = _names("to_zero", to_zero)
    over_ = _names("over", over) if over is not None else [n for n in names if n not in zero]
    if coupling is not None and (not isinstance(coupling, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in coupling.items())):
        raise InputError(f"coupling={coupling!r} is not accepted: give a dict of formulas, e.g. coupling={{'k': 'd**(1/2)'}}")
    for v in over_ + zero:
        if v not in names:
            raise InputError(f"variable {v!r} does not appear in either formula (they use {', '.join(names) or 'none'})")
    tends = {v: "oo" for v in over_} | {v: "0" for v in zero}
    coupled = {v: parse_expression(e) for v, e in (coupling or {}).items()} or None
    try:
        res = compare_growth(ea, eb, tends, coupled)
    except GrowthError as err:
        raise InputError(f"cannot compare: {err}") from None
    return replace(res, a=str(ea), b=str(eb))


# -- simulate: training --------------------------------------------------------------------------
def train(config: RunConfig) -> Run:
    """Train ``config.seeds`` networks of one config in a batch (log-space losses) and measure them.
    ``Run.save(directory)`` writes the run directory that ``ibcheck radius`` and ``kkt-check`` read."""
    from ibcheck.simulate.substrate.training import RunConfig, run  # heavy: torch (loaded on first use)

    if not isinstance(config, RunConfig):
        raise InputError(f"config={type(config).__name__} is not a RunConfig (build one with ibcheck.RunConfig(...))")
    return run(config)


def load_run(path: str) -> Run:
    """A run directory written by ``Run.save`` (or ``ibcheck train``), read back as a :class:`Run`."""
    from ibcheck.simulate.substrate.rundir import load_run as _load  # heavy: torch (loaded on first use)

    return _load(path)


# -- solvers: radii and KKT points ---------------------------------------------------------------
def radii(run_or_network, X: np.ndarray | None = None, y: np.ndarray | None = None,
          methods: Sequence[Method] = ("universal", "attack", "certified", "exact"), points: int = 200, seed: int = 0,
          direction: Direction = "auto", time_limit: float = 5.0, flip_norms: Sequence[float] | None = None,
          overlay: Sequence[Run] = ()) -> Radii:
    """l2 flip radii, bracketed from both sides: for a Run at ``points`` fresh test points (or at ``X, y``),
    for one network at ``X, y``. Methods: universal direction, attacks (upper bounds), certified
    (lower bounds), exact (mixed-integer, within ``time_limit`` seconds per point)."""
    from ibcheck.simulate.substrate.training import Run  # heavy: torch (loaded on first use)
    from ibcheck.simulate.tools.radii import (
        radii as _radii,  # heavy: the simulate layer (scipy, pandas; torch on use), kept out of import ibcheck (loaded on first use)
    )

    if not isinstance(run_or_network, Run):
        check_network(run_or_network, "run_or_network")
    if X is not None or y is not None or not isinstance(run_or_network, Run):
        X, y = check_data(X, y, dim=None if isinstance(run_or_network, Run) else _input_dim(run_or_network))

    methods = _sequence("methods", methods)
    if not all(isinstance(m, str) for m in methods):
        raise refused("methods", methods, "is out of range: must be a non-empty subset of universal, attack, certified, exact")
    require_choice("direction", direction, ("auto", "fvbs23", "lpll25", "vys22"))
    if flip_norms is not None:
        flip_norms = _sequence("flip_norms", flip_norms)
    overlay = _sequence("overlay", overlay, allow_empty=True)
    if not all(isinstance(r, Run) for r in overlay):
        raise InputError("overlay must be a list of Runs (read with ibcheck.load_run), drawn on the same plot")
    return _radii(run_or_network, X, y, tuple(methods), points, seed, direction, time_limit, flip_norms, overlay)


def kkt_points(config: KKTSearchConfig | None = None, progress: bool = False, **fields) -> KKTPoints:
    """The KKT points of the max-margin problem (P): the KKT engine (:mod:`ibcheck.solvers.kkt.engine`) on generated
    clusters or sphere data, or on your own arrays: ``kkt_points(X=..., y=..., cluster=None, width=..., ...)`` (y in
    {-1, +1}; ``cluster``: one integer per point, each cluster of one class). Every candidate is certified under one
    policy (a relative residual of 1e-6, ties by the Clarke rule) and grouped into distinct points; with
    ``include_global=True`` each point is compared with the certified global optimum. Fields as in KKTSearchConfig."""
    started = time.perf_counter()  # the time cap counts from here, the heavy imports included
    from ibcheck.simulate.tools.kkt_search import KKTSearchConfig  # heavy: torch (loaded on first use)
    from ibcheck.simulate.tools.kkt_search import kkt_points as _search  # heavy: torch (loaded on first use)

    require_bool("progress", progress)
    if "X" in fields or "y" in fields:
        fields.setdefault("data", "arrays")
    try:
        cfg = replace(config, **fields) if config is not None else KKTSearchConfig(**fields)
    except TypeError as err:
        raise InputError(f"kkt_points: {err} (fields: data, X, y, cluster, d, k, n, sigma, width, starts, max_starts, saturation, time, covers, "
                         "objective, direction, programs, enumerate, "
                         "include_global, bias, seed, max_patterns)") from None
    return _search(cfg, progress=progress, started=started)


def read_data(path: str) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(X, y, cluster or None) from an .npz (arrays X, y and optionally cluster) or a .csv (a header row: a column y,
    optionally cluster, every other column a feature): the user's own data for :func:`kkt_points`. Read as data, never
    executed; read strictly (a regular file, at most 10,000 points and features, only the named arrays, numbers as
    written), and checked by :func:`kkt_points`."""
    from ibcheck.simulate.tools.kkt_search import load_data_file  # heavy: the simulate layer (torch)

    if isinstance(path, os.PathLike) and isinstance(os.fspath(path), str):
        path = os.fspath(path)  # a pathlib.Path is a path as well
    return load_data_file(_text("path", path))


def read_direction(path: str) -> np.ndarray:
    """The direction ``v`` (one array of length d, at most 10,000) from an .npz: the flip objective's direction for
    :func:`kkt_points` (``objective="flip"``). Read as data, strictly, like :func:`read_data`."""
    from ibcheck.simulate.substrate.userdata import read_npz  # heavy: the simulate layer (torch)

    if isinstance(path, os.PathLike) and isinstance(os.fspath(path), str):
        path = os.fspath(path)
    return read_npz(_text("path", path), "direction", {"v": ("d",)}, {"d": 10_000}, ("v",), 10_000)["v"]


def kkt_certificate(network, X: np.ndarray, y: np.ndarray, active_tol: float = 1e-6) -> KKTCertificate:
    """Is ``network`` (scaled to unit margin) a KKT point of (P) on ``X, y``? A certificate from an
    optimal solver status, never from a guess: ``is_kkt()`` and ``failures()`` say which condition fails. At any scale
    of the data and weights; "not proven" where float64 cannot decide (:mod:`ibcheck.solvers.kkt.scaled`)."""
    from ibcheck.solvers.kkt.scaled import certificate_at_any_scale as _cert  # heavy: cvxpy (loaded on first use)

    check_network(network)
    X, y = check_data(X, y, dim=_input_dim(network))
    require_float("active_tol", active_tol, 1e-12, strict=False, high=1.0)
    return _cert(network, np.asarray(X, float), np.asarray(y, float), active_tol=active_tol)


def global_max_margin(X: np.ndarray, y: np.ndarray, bias: bool = True, max_patterns: int = 5000,
                      candidates: Sequence = ()) -> GlobalOptimum:
    """The global optimum of (P) on a small instance (convex reformulation over activation patterns),
    ``certified`` only when proven; otherwise an upper bound that says so."""
    from ibcheck.solvers.kkt.global_opt import global_max_margin as _glob  # heavy: cvxpy (loaded on first use)

    X, y = check_data(X, y)
    require_bool("bias", bias)
    require_int("max_patterns", max_patterns, 1, high=10**6)
    candidates = [check_network(c, "candidates[]") for c in _sequence("candidates", candidates, allow_empty=True)]
    return _glob(np.asarray(X, float), np.asarray(y, float), bias=bias, max_patterns=max_patterns, candidates=list(candidates))


def svm(X: np.ndarray, y: np.ndarray, bias: bool = True):
    """The hard-margin linear SVM (SHNGS18's w_svm): ``w``, ``b``, the multipliers ``alpha``, the support
    vectors, ``margin``, the ``status`` ("optimal"; "infeasible" only where an overlap of the classes is proven;
    "not proven" where float64 cannot decide, with ``separable`` None; "unbounded" for one class with a bias) and the
    ``evidence`` the answer rests on. Solved in normalized units at every scale and scaled back."""
    from ibcheck.solvers.svm import hard_margin_svm  # heavy: cvxpy (loaded on first use)

    X, y = check_data(X, y)
    return hard_margin_svm(X, y, bias=require_bool("bias", bias))


def normalized_margin(network, X: np.ndarray, y: np.ndarray) -> float:
    """LL20.def.normalized_margin: ``min_i y_i f(x_i) / ||theta||^L`` for an L-homogeneous network
    (scale-free: it does not change when theta is multiplied by c > 0)."""
    check_network(network)
    X, y = check_data(X, y, dim=_input_dim(network))
    return _nm(network, X, y)


def direction_error(w, reference) -> float:
    """SHNGS18.thm.direction: ``|| w/||w|| - w_ref/||w_ref|| ||`` (e.g. GD's iterate against ``svm(X, y).w``)."""
    from ibcheck.solvers.svm import direction_error as _de  # heavy: cvxpy (loaded on first use)

    a, b = check_X(_row(w, "w"), "w"), check_X(_row(reference, "reference"), "reference")
    if a.shape != b.shape:
        raise InputError(f"w has {a.shape[1]} entries and reference {b.shape[1]}: give two vectors of the same length")
    return _de(a[0], b[0])


def _row(v, name: str) -> list:
    """A vector as a one-row matrix for check_X; anything else is refused naming ``name``."""
    if np.iscomplexobj(v) or (isinstance(v, (list, tuple)) and any(isinstance(e, complex) for e in v)):
        raise InputError(f"{name} has complex entries: give a vector of real numbers")
    try:
        arr = np.asarray(v, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"{name} is not a vector of numbers") from None
    if arr.ndim != 1:
        raise InputError(f"{name} has shape {arr.shape}: give a vector (1-D)")
    return [arr.tolist()]


# -- simulate: theory against simulation ---------------------------------------------------------
def experiment(claim: str, grid: Mapping[str, Sequence[float]], seeds: int = 3, quick_grid: Mapping[str, Sequence[float]] | None = None,
               quick_seeds: int | None = None, fixed: Mapping[str, object] | None = None, max_grid: Mapping[str, float] | None = None,
               description: str = "", quantities: Sequence[str] = (), trajectory: bool | str = False,
               cost: Callable[[dict], float] | None = None):
    """Decorator binding ``measure(cell, seed) -> {quantity: value}`` to a claim, for :func:`compare` and
    ``ibcheck compare``. ``grid`` maps each swept variable to its values; ``quick_grid``/``quick_seeds`` are used
    with ``quick=True``; ``fixed`` adds settings every cell sees; ``max_grid`` caps how far a budget may extend a
    variable; ``quantities`` default to the claim's bounds. ``trajectory=True`` (or the time variable's name):
    the measure returns one run as series, fitted along time. ``cost(cell)`` is the relative work of one task
    (default 1), which a ``budget`` counts. A measure that raises, or returns a missing or non-finite quantity,
    gives a failed row with its reason."""
    from ibcheck.simulate.experiments.registry import (
        experiment as _experiment,  # heavy: the simulate layer (scipy, pandas; torch on use), kept out of import ibcheck (loaded on first use)
    )

    as_dict = lambda m: dict(m) if isinstance(m, Mapping) else m  # noqa: E731  (anything else is refused there, by name)
    return _experiment(claim, as_dict(grid), seeds, as_dict(quick_grid), quick_seeds, as_dict(fixed), as_dict(max_grid), description,
                       tuple(quantities) if isinstance(quantities, (list, tuple)) else quantities, trajectory, cost)



def compare(claim: str, grid: Mapping[str, Sequence[float]] | None = None, seeds: int | None = None, budget: float | None = None,
            quick: bool = False, store: str | None = None, workers: int = 1, margin: float | None = None, inside_only: bool = False,
            constants: Mapping[str, float] | None = None, spending: Literal["pocock", "obrien-fleming"] = "pocock",
            progress: bool = False, margin_log: float | None = None, offsets: Literal["fit", "known"] = "fit",
            fit_from: Mapping[str, float] | None = None, scheduler: str | None = None, dask: bool = False,
            max_seconds: float | None = None, include_outside: bool = False,
            log_corrections: bool = False, plan_trials: int = 20) -> ComparisonResult:
    """Sweep the claim's experiment over ``grid`` x ``seeds`` (growing it in rounds within ``budget``
    seconds) and judge each bound by the ratio of the measure to the claim's own function, log factors
    included: consistent, inconsistent or inconclusive, each with its reason, the resolution (the smallest
    deviation the sweep detects), whether the bound is attained, any correction to scaling, and the
    hypotheses' status at the measured cells. ``store`` names a SQLite file that makes the sweep resumable.
    Every exponent the claim states is also fitted with its CI, as a description. ``margin`` and
    ``margin_log`` (None by default) are explicit tolerances for a power and a log factor, replacing the
    resolution; ``offsets="known"`` takes the log factors as known on request; ``fit_from={"T": 1e3}``
    fits only late times. ``quick=True`` takes the experiment's small design (its quick grid, seeds and settings), as ``ibcheck compare --quick`` does; the
    default, here and on the command line, is the full design. ``workers`` local processes, or Dask
    (``dask=True``: a LocalCluster of ``workers``; ``scheduler="tcp://..."``: a running one);
    ``max_seconds`` caps the wall clock (the verdict then depends on the machine, and says so). Cells outside the
    claim's hypotheses are run but not fitted, and no round adds one, where enough cells lie inside to fit;
    ``include_outside=True`` fits them too. An inconclusive bound's plan (the design that would decide) is checked by
    simulation before it is named: ``plan_trials`` engine runs per truth the data leave open (0: no plan is named)."""
    from ibcheck.simulate.compare.driver import compare_claim  # heavy: scipy (loaded on first use)

    # every value is checked at the comparison's one boundary (simulate.compare.inputs), before anything runs
    return compare_claim(claim, store=store, grid=grid, seeds=seeds, budget=budget, quick=quick, workers=workers, margin=margin,
                         progress=progress, inside_only=inside_only, constants=constants, spending=spending,
                         margin_log=margin_log, offsets=offsets, fit_from=fit_from, scheduler=scheduler, dask=dask,
                         max_seconds=max_seconds, include_outside=include_outside, log_corrections=log_corrections,
                         plan_trials=plan_trials)


def probability_claims() -> tuple[str, ...]:
    """The claims measured on another claim's sweep with a binomial test (:func:`compare_probability`)."""
    from ibcheck.simulate.compare.probability import PROBABILITY_CLAIMS  # heavy: scipy (loaded on first use)

    return tuple(PROBABILITY_CLAIMS)


def compare_probability(claim: str, extend: bool = True, **options) -> "ProbabilityComparison":
    """A claim that bounds a quantity with probability 1 - delta over the sample (FVBS23.thm.3_1: every KKT point's
    test error <= eps w.p. >= 1 - delta), measured on its base claim's sweep: :func:`compare` runs the base (``options``
    as there), and a binomial test over its samples inside the claim's own hypotheses gives the verdict. With
    ``extend``, where those samples are too few to decide, the cheapest slice of inside cells gets more seeds (in
    ``extension.sqlite`` beside ``store``); the reason states the mix."""
    from ibcheck.simulate.compare.probability import PROBABILITY_CLAIMS, extended_comparison, probability_comparison  # heavy: scipy

    _text("claim", claim)  # compare_probability([]) was a bare TypeError (an unhashable list looked up in a dict)
    if claim not in PROBABILITY_CLAIMS:
        raise InputError(f"{claim!r} is not a probability claim; those measured on another claim's sweep: {', '.join(PROBABILITY_CLAIMS)}")
    base = PROBABILITY_CLAIMS[claim].base
    accepted = dict.fromkeys((*get_claim(claim).constants, *get_claim(base).constants))
    for k in options.get("constants") or {}:  # checked here, so that the refusal names the claim the user asked for
        if k not in accepted:
            raise refused("constants", dict(options["constants"]), f"names {k!r}, but neither {claim} nor the claim it is measured on "
                          f"({base}) has a constant {k!r}; their constants are {', '.join(accepted) or 'none'}")
    require_bool("extend", extend)
    result = compare(base, **options)
    if not extend:
        return probability_comparison(claim, result)
    store, workers, progress = options.get("store"), options.get("workers") or 1, bool(options.get("progress", True))
    if store:  # the added samples in a store of their own beside the base's (a temporary one without a store)
        return extended_comparison(claim, result, os.path.join(os.path.dirname(os.path.abspath(store)), "extension.sqlite"), workers, progress)
    with tempfile.TemporaryDirectory(prefix="ibcheck-extension-") as tmp:
        return extended_comparison(claim, result, os.path.join(tmp, "extension.sqlite"), workers, progress)


def design(claim: str, quick: bool = True, budget: float | None = None, seeds: int | None = None) -> "WindowDesign":
    """The grid :func:`compare` would run for ``claim``'s experiment: each cell with the free settings picked inside
    the claim's applicability window (e.g. FVBS23's n), whether every hypothesis holds there and which binds, and
    the estimated work per task; where no cell is inside, the smallest inside cell beyond the grid."""
    from ibcheck.simulate.compare import inputs  # heavy: the simulate layer (scipy, pandas; torch on use), kept out of import ibcheck (loaded on first use)
    from ibcheck.simulate.experiments.window import (
        window_design,  # heavy: the simulate layer (scipy, pandas; torch on use), kept out of import ibcheck (loaded on first use)
    )

    require_bool("quick", quick)
    budget, seeds = inputs.check_work("budget", budget), inputs.check_seeds(seeds)
    return window_design(_text("claim", claim), quick=quick, budget=budget, seeds=seeds)


def verdict(data: str, claim: str | None = None, quantity: str | None = None, reading: str | None = None,
            predict: str | None = None, kind: Literal["O", "Omega", "Theta"] | None = None, margin: float | None = None,
            constants: Mapping[str, float] | None = None, margin_log: float | None = None, offsets: Literal["fit", "known"] = "fit",
            fit_from: Mapping[str, float] | None = None, trajectory: bool = False, log_corrections: bool = False,
            include_outside: bool = False, plan_trials: int = 20) -> ComparisonResult:
    """Judge your own measurements (a CSV with the variables, ``seed`` and ``value``) against a claim
    of the registry, or against a stated prediction (``predict="d=1/2,k=-1/2"`` or ``"t=0,log(t)=-1"``
    with ``kind``). ``trajectory=True``: each seed is one run measured along the fitted variable. As in
    :func:`compare`, only the cells inside the claim's hypotheses are fitted where enough lie inside;
    ``include_outside=True`` fits every row; ``plan_trials`` as in :func:`compare`."""
    from ibcheck.simulate.compare.from_csv import (
        verdict_from_csv,  # heavy: the simulate layer (scipy, pandas; torch on use), kept out of import ibcheck (loaded on first use)
    )

    if not isinstance(data, (str, os.PathLike)):
        raise InputError(f"data={data!r} is not a path to a CSV file", "data", data)
    for pname, value in (("claim", claim), ("quantity", quantity), ("reading", reading), ("predict", predict), ("kind", kind)):
        _text(pname, value, optional=True)
    # margins, offsets, fit_from, constants and trajectory are checked at the comparison's boundary (simulate.compare.inputs)
    return verdict_from_csv(os.fspath(data), claim, quantity, reading, predict, kind, margin, constants, margin_log, offsets,
                            fit_from, trajectory, log_corrections, include_outside, plan_trials)


def _check_constants(constants) -> dict[str, float] | None:
    from ibcheck.simulate.compare.inputs import (
        check_constants,  # heavy: the simulate layer (scipy, pandas; torch on use), kept out of import ibcheck (loaded on first use)
    )

    return check_constants(constants)


def _choice(name: str, value, accepted: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in accepted:
        raise InputError(f"{name}={value!r} is not one of {', '.join(accepted)}")
    return value


def reproduce(name: str, quick: bool = False, idx_dir: str | None = None) -> Reproduction:
    """One reproduction of the sources' experiments, side by side with their numbers: measurements,
    the criteria (quantity, source value, measured, rule, verdict) and the figures. ``idx_dir``
    (fa-digits): a directory with MNIST-format IDX files."""
    from ibcheck.simulate.reproductions import run_reproduction  # heavy: scipy (loaded on first use)

    return run_reproduction(_text("name", name), require_bool("quick", quick), _text("idx_dir", idx_dir, optional=True))


def calibrate(trials: int = 100, budget: float | None = None, seed: int = 0, progress: bool = False,
              plan_trials: int = 0) -> Calibration:
    """The verdict engine on synthetic data with known truth: per scenario, the rate of each verdict over
    ``trials`` draws, each a budgeted sequential sweep (``budget`` synthetic seconds; default 20). ``plan_trials`` > 0:
    each inconclusive trial's plan is checked by simulation (that many runs per story) and, where one is named, swept
    from the scenario's own truth: per scenario, how often the named plan decided, the right way, when it was run
    (10-60 s per inconclusive trial)."""
    from ibcheck.simulate.compare.calibrate import DEFAULT_BUDGET, Calibration  # heavy: scipy (loaded on first use)
    from ibcheck.simulate.compare.calibrate import calibrate as _calibrate  # heavy: scipy (loaded on first use)

    require_int("trials", trials, 1, high=100_000)
    require_int("seed", seed, 0)
    b = DEFAULT_BUDGET if budget is None else require_float("budget", budget, 0.0, strict=True, high=1e6)
    return Calibration(_calibrate(trials, b, seed=seed, progress=require_bool("progress", progress),
                                  plan_trials=require_int("plan_trials", plan_trials, 0, high=200)))


def report(out: str, quick: bool = True, budget: float | None = None, only: Sequence[str] = (), workers: int = 2,
           inside_only: bool = False, constants: Mapping[str, float] | None = None,
           spending: Literal["pocock", "obrien-fleming"] = "pocock") -> str:
    """The main job (``ibcheck report``, ``make report``): the bound scaling report, a comparison of every claim
    with an experiment (sharing ``budget`` work), the sources' reproductions and an index page, written
    under ``out``; returns the path of index.html. ``only`` restricts it to these claims."""
    from ibcheck.simulate.compare.suite import SuiteOptions, run_suite  # heavy: scipy (loaded on first use)
    from ibcheck.simulate.report.index import write_index  # heavy: matplotlib (loaded on first use)
    from ibcheck.simulate.reproductions import run_all  # heavy: scipy (loaded on first use)

    t0 = time.perf_counter()
    opts = SuiteOptions(quick=require_bool("quick", quick), budget=budget, only=tuple(_names("only", list(only))), workers=workers,
                        inside_only=require_bool("inside_only", inside_only), constants=_check_constants(constants) or {},
                        spending=_choice("spending", spending, ("pocock", "obrien-fleming")))
    out = check_out(_text("out", out))
    suite = run_suite(opts, out)                                                  # compute: the sweep stores only
    reps = run_all(opts.quick, suite.known(), log=_stderr) if not opts.only else ()
    return write_index(out, suite, reps, seconds=time.perf_counter() - t0)       # render and save


def _stderr(text: str) -> None:
    print(text, file=sys.stderr)


def kkt_trajectory(run: Run, seed: int | None = None, polish: bool = False) -> KKTTrajectory:
    """Certify every checkpoint of ``seed`` (default: the first) of a saved run as an (eps, delta)-KKT point
    (LL20.def.eps_delta_kkt); ``polish`` adds SLSQP from the last checkpoint and its cosine to GD's direction."""
    from ibcheck.simulate.substrate.rundir import Run  # heavy: torch (loaded on first use)
    from ibcheck.simulate.tools.kkt_search import kkt_trajectory as _trajectory  # heavy: torch (loaded on first use)

    if not isinstance(run, Run):
        raise InputError(f"run={type(run).__name__} is not a Run (read one with ibcheck.load_run(path))")
    if seed is not None:
        require_int("seed", seed, 0)
    return _trajectory(run, seed, require_bool("polish", polish))


def robust_construction(source: Run, which: Literal["fvbs23", "lpll25-robust"]) -> Run:
    """A one-network Run holding the robust construction of FVBS23.thm.4_1 (``fvbs23``) or LPLL25.prop.robust_exists
    (``lpll25-robust``), built from the cluster means of ``source``'s data; :func:`radii` measures it like a trained run."""
    from ibcheck.simulate.substrate.rundir import Run  # heavy: torch (loaded on first use)
    from ibcheck.simulate.tools.radii import (
        robust_construction as _construct,  # heavy: the simulate layer (scipy, pandas; torch on use), kept out of import ibcheck (loaded on first use)
    )

    if not isinstance(source, Run):
        raise InputError(f"source={type(source).__name__} is not a Run (read one with ibcheck.load_run(path))")
    return _construct(source, _choice("which", which, ("fvbs23", "lpll25-robust")))


def scaling_report(out: str, claims: Sequence[str] | None = None) -> str:
    """The bound scaling report (Markdown and PNGs) of ``claims`` (a list of claim ids; None, the default: every claim) under
    ``out``; returns its path. An empty list is refused: it names no claim (it once meant every claim)."""
    from ibcheck.simulate.report.figures import (
        scaling_report as _scaling,  # heavy: the simulate layer (scipy, pandas; torch on use), kept out of import ibcheck (loaded on first use)
    )

    where = _text("out", out)  # checked before claims: scaling_report(-1, -1) was a bare TypeError from list(-1)
    names = [claims] if isinstance(claims, str) else claims
    if names is not None and (not isinstance(names, (list, tuple)) or not all(isinstance(c, str) for c in names)):
        raise refused("claims", claims, "is not accepted: must be a list of claim ids, e.g. ['FVBS23.thm.4_2'] (None: every claim)")
    if names is not None and not names:
        raise refused("claims", claims, "names no claim: give claim ids, e.g. ['FVBS23.thm.4_2'], or None for every claim")
    return _scaling(list(names) if names is not None else None, where)


def claim_template(claim_id: str, file: str) -> str:
    """The text of a commented template of your own claim ``claim_id`` and its experiment, runnable as written
    (``ibcheck --claims FILE compare CLAIM_ID``); ``file`` is named in its usage lines."""
    from ibcheck.simulate.experiments.scaffold import (
        claim_template as _template,  # heavy: the simulate layer (scipy, pandas; torch on use), kept out of import ibcheck (loaded on first use)
    )

    return _template(_text("claim_id", claim_id), _text("file", file))


__all__ = ["claims", "claim", "bounds", "window", "design", "growth", "train", "load_run", "radii", "kkt_points", "read_data", "kkt_certificate",
           "global_max_margin", "svm", "normalized_margin", "direction_error", "experiment", "compare", "compare_probability",
           "probability_claims", "verdict", "reproduce", "calibrate", "report", "kkt_trajectory", "robust_construction", "scaling_report", "claim_template"]


def _arguments_checked(f):
    """``f`` with its arguments bound first: an unknown keyword, or a missing or surplus argument, is an InputError
    naming the call and what it accepts.

    Pitfall avoided: ``ibcheck.compare("X", seed=3)`` was a bare TypeError, the one refusal of the API that was not an
    InputError, and it did not say the keyword is ``seeds``."""
    sig = inspect.signature(f)
    accepted = ", ".join(n for n, p in sig.parameters.items() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD))

    @functools.wraps(f)
    def call(*args, **kwargs):
        try:
            sig.bind(*args, **kwargs)
        except TypeError as err:
            near = [difflib.get_close_matches(k, list(sig.parameters), n=1) for k in kwargs if k not in sig.parameters]
            hint = f"; did you mean {near[0][0]}?" if near and near[0] else ""
            raise InputError(f"{f.__name__}: {err}{hint} (it accepts: {accepted})") from None
        return f(*args, **kwargs)

    return call


def _numerics_handled(f):
    """``f`` with numpy's floating-point RuntimeWarnings silenced: the KKT and radius solvers meet overflow on diverging
    starts and handle it (each result carries its own status: not a certificate, not proven), so the warnings said
    nothing a user could act on ("overflow encountered in matmul", 8 times per KKT search). Only the solver calls, which
    run no code of the user's."""
    @functools.wraps(f)
    def call(*args, **kwargs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            return f(*args, **kwargs)

    return call


for _name in ("kkt_points", "kkt_certificate", "global_max_margin", "radii", "kkt_trajectory"):
    globals()[_name] = _numerics_handled(globals()[_name])
for _name in __all__:  # every public call refuses bad arguments as InputError, at the boundary
    globals()[_name] = _arguments_checked(globals()[_name])
