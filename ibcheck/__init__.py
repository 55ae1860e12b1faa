"""ibcheck: a symbolic-numeric checker for implicit-bias theory.

The three layers are subpackages: ``ibcheck.theory`` (claims, growth, windows), ``ibcheck.solvers``
(networks, SVM, KKT, radii) and ``ibcheck.simulate`` (training, sweeps, fits, verdicts). In the
repository they are the top-level folders ``theory/``, ``solvers/`` and ``simulate/``; an
installed copy maps them under ``ibcheck`` (setuptools ``package-dir``), and so does a run from
the source tree itself, below.
"""
from __future__ import annotations

import os as _os

_root = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))
if all(_os.path.isfile(_os.path.join(_root, layer, "__init__.py")) for layer in ("theory", "solvers", "simulate")):
    # a source tree (a checkout, or a copy of one on PYTHONPATH): ibcheck.theory is <root>/theory
    __path__.append(_root)  # type: ignore[name-defined]  # noqa: F821
