"""Arrays at the API boundary, checked once (in the manner of scikit-learn's ``check_array``).

Pitfalls avoided: one NaN in X made every radius infinite (NaN comparisons are False, so no
flip was ever found); labels {0, 2} were accepted and halved the radii; an empty X reached the
solvers as an IndexError; an array of objects or strings became a numpy error far from the call.
"""
from __future__ import annotations

import numpy as np

from ibcheck.errors import InputError

from .networks import LinearClassifier, MulticlassReLU, RandomNet, TwoLayerReLU

MAX_ELEMENTS = 50_000_000  # 400 MB of float64: past this, refuse before allocating


def check_X(X, name: str = "X", dim: int | None = None) -> np.ndarray:
    """A finite 2-D float array with at least one row and one column (``dim`` columns when given)."""
    if X is None:
        raise InputError(f"{name} is required: a 2-D array of shape (n, d)")
    size = getattr(X, "size", None)
    if isinstance(size, int) and size > MAX_ELEMENTS:
        raise InputError(f"{name} has {size} entries: at most {MAX_ELEMENTS} are accepted")
    if np.iscomplexobj(X) or _has_complex(X):
        raise InputError(f"{name} has complex entries: every entry must be a real number (take .real yourself if that is meant)")
    try:
        A = np.asarray(X, dtype=float)
    except (TypeError, ValueError, OverflowError) as err:
        raise InputError(f"{name} is not an array of numbers ({type(err).__name__}: {str(err)[:80]})") from None
    if A.ndim != 2 or A.shape[0] < 1 or A.shape[1] < 1:
        raise InputError(f"{name} has shape {A.shape}: it must be 2-D, (n, d) with n >= 1 and d >= 1")
    if not np.isfinite(A).all():
        bad = np.argwhere(~np.isfinite(A))[0]
        raise InputError(f"{name}[{bad[0]}, {bad[1]}] = {A[tuple(bad)]}: every entry must be a finite number")
    if dim is not None and A.shape[1] != dim:
        raise InputError(f"{name} has {A.shape[1]} columns: the network takes inputs of dimension {dim}")
    return A


def check_labels(y, n: int, name: str = "y") -> np.ndarray:
    """Binary labels in {-1, +1}, one per row of X (bools and {0, 1} are refused: say which is +1)."""
    if y is None:
        raise InputError(f"{name} is required: labels in {{-1, +1}}, one per row of X")
    if np.iscomplexobj(y) or _has_complex(y):
        raise InputError(f"{name} has complex entries: labels must be -1 or +1")
    try:
        v = np.asarray(y, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise InputError(f"{name} is not an array of numbers") from None
    if v.ndim != 1 or len(v) != n:
        raise InputError(f"{name} has shape {v.shape}: it must be 1-D with one label per row of X ({n})")
    bad = ~np.isin(v, (-1.0, 1.0))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise InputError(f"{name}[{i}] = {v[i]:g}: labels must be -1 or +1 (map your classes to -1/+1 first)", name, float(v[i]))
    return v


def _has_complex(X) -> bool:
    """A nested list holding a Python complex (np.iscomplexobj sees only arrays' dtypes).

    Pitfall avoided: ``np.asarray([[1+2j]], float)`` keeps the real part with only a warning."""
    if isinstance(X, complex):
        return True
    if isinstance(X, (list, tuple)) and len(X) <= MAX_ELEMENTS:
        stack, seen = [X], 0
        while stack and seen < 10_000_000:
            v = stack.pop()
            seen += 1
            if isinstance(v, complex) or (isinstance(v, np.ndarray) and np.iscomplexobj(v)):
                return True
            if isinstance(v, (list, tuple)):
                stack.extend(v)
    return False


def check_data(X, y, dim: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``check_X`` and ``check_labels`` together."""
    A = check_X(X, dim=dim)
    return A, check_labels(y, len(A))


def check_network(net, name: str = "network"):
    """A network object of :mod:`ibcheck.solvers.networks` with finite parameters."""
    if not isinstance(net, (TwoLayerReLU, LinearClassifier, MulticlassReLU, RandomNet)):
        raise InputError(f"{name} is a {type(net).__name__}: give a network of ibcheck.solvers.networks (TwoLayerReLU, ...) or a Run")
    theta = net.params()
    if not np.isfinite(theta).all():
        raise InputError(f"{name} has non-finite parameters")
    return net
