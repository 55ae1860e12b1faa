"""JSON-safe data: the one conversion to plain Python and the one strict JSON writer.

A leaf module: the file writers (:mod:`.atomic`) and the results (:mod:`.result`) both use it.
"""
from __future__ import annotations

import json
import math
from typing import Any


def plain(x: Any) -> Any:
    """JSON-safe copy: numpy scalars and arrays to Python, non-finite floats to None, tuples to lists,
    private keys (``_fit``, ``_cosine_matrix``) left out.

    Pitfall avoided: ``json.dumps`` writes ``NaN`` and ``Infinity``, which are not JSON and break
    strict readers (jq, JavaScript)."""
    if isinstance(x, dict):
        return {str(k): plain(v) for k, v in x.items() if not str(k).startswith("_")}
    if isinstance(x, (list, tuple)):
        return [plain(v) for v in x]
    if hasattr(x, "tolist") and not isinstance(x, (str, bytes)):
        return plain(x.tolist())
    if isinstance(x, bool) or x is None or isinstance(x, (int, str)):
        return x
    if isinstance(x, float):
        return x if math.isfinite(x) else None
    try:
        f = float(x)
    except (TypeError, ValueError):
        return str(x)
    return f if math.isfinite(f) else None


def dumps(obj: Any, indent: int | None = 2) -> str:
    """The one JSON writer of the command line and the files: :func:`plain` first, then strict JSON
    (``allow_nan=False``: a NaN that slipped through is an error here, not invalid JSON for the reader)."""
    return json.dumps(plain(obj), indent=indent, allow_nan=False)
