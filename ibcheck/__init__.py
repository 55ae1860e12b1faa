"""ibcheck: a symbolic-numeric checker for implicit-bias theory.

One call per capability (see :mod:`ibcheck.api`), each returning a frozen dataclass with
``to_json()``, a notebook display and ``save(directory)``::

    import ibcheck
    ibcheck.window("FVBS23.thm.4_2", free="d", at={"k": 10, "n": 5000, "eps": 0.1, "delta": 0.1})

The three layers are subpackages: ``ibcheck.theory`` (claims, growth, windows), ``ibcheck.solvers``
(networks, SVM, KKT, radii) and ``ibcheck.simulate`` (training, sweeps, fits, verdicts). In the
repository they are the top-level folders ``theory/``, ``solvers/`` and ``simulate/``; an
installed copy maps them under ``ibcheck`` (setuptools ``package-dir``), and so does a run from
the source tree itself, below. ``import ibcheck`` loads neither torch nor cvxpy.
"""
from __future__ import annotations

import importlib as _importlib
import os as _os
import sys as _sys

if _os.path.basename(_sys.argv[0] if _sys.argv else "") in ("ibcheck", "ibcheck.exe") and __name__ == "ibcheck":
    # the ibcheck command (its console script imports this package first, about 1.5 s of sympy and scipy): a Ctrl-C
    # before ibcheck.cli.main takes over is one line and exit 130, as after it, not Python's traceback; nothing has
    # been written yet. main() puts Python's own handler back as it starts.
    import signal as _signal

    def _interrupted_at_start(signum, frame):  # pragma: no cover - exercised in a subprocess (tests/test_outputs.py)
        _sys.stderr.write("ibcheck: interrupted. Nothing was written.\n")
        _os._exit(130)

    if _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:
        _signal.signal(_signal.SIGINT, _interrupted_at_start)

_root = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
if all(_os.path.isfile(_os.path.join(_root, layer, "__init__.py")) for layer in ("theory", "solvers", "simulate")):
    # a source tree (a checkout, or a copy of one on PYTHONPATH): ibcheck.theory is <root>/theory
    __path__.append(_root)  # type: ignore[name-defined]  # noqa: F821

from ibcheck.simulate.substrate.censored import AtLeast, AtMost  # noqa: E402
from ibcheck.theory.claim import Bound, Claim, Hypothesis  # noqa: E402
from ibcheck.theory.registry import Registry, load_claims, register  # noqa: E402
from ibcheck.theory.registry import using as using_registry  # noqa: E402
from ibcheck.theory.variables import Variable  # noqa: E402

from .api import (  # noqa: E402
    bounds,
    calibrate,
    claim,
    claim_template,
    claims,
    compare,
    compare_probability,
    design,
    direction_error,
    experiment,
    global_max_margin,
    growth,
    kkt_certificate,
    kkt_points,
    kkt_trajectory,
    load_run,
    normalized_margin,
    probability_claims,
    radii,
    read_data,
    read_direction,
    report,
    reproduce,
    robust_construction,
    scaling_report,
    svm,
    train,
    verdict,
    window,
)
from .errors import InputError, RunFailure  # noqa: E402

_CONFIGS = {"RunConfig": "substrate.training", "DataConfig": "substrate.training", "ModelConfig": "substrate.models",
            "TrainConfig": "substrate.trainer", "KKTSearchConfig": "tools.kkt_search", "ComparisonResult": "compare.result",
            "CompareOptions": "compare.driver"}


def __getattr__(name: str):
    """The config dataclasses, imported on first use (they live beside torch code)."""
    if name in _CONFIGS:
        return getattr(_importlib.import_module(f"ibcheck.simulate.{_CONFIGS[name]}"), name)
    raise AttributeError(f"module 'ibcheck' has no attribute {name!r}")


__all__ = ["Bound", "Claim", "Hypothesis", "Variable", "load_claims", "register", "Registry", "using_registry",
           "claims", "claim", "bounds", "window", "design", "growth", "train", "load_run", "radii", "kkt_points", "kkt_certificate",
           "global_max_margin", "svm", "normalized_margin", "direction_error", "AtLeast", "AtMost",
           "experiment", "compare", "compare_probability", "verdict", "reproduce", "report", "calibrate", "claim_template",
           "kkt_trajectory", "probability_claims", "read_data", "read_direction", "robust_construction", "scaling_report", "InputError", "RunFailure",
           *_CONFIGS]
