"""The command line's own parsing: flag text to Python values, and the options every command shares.

Only text is parsed here (``d=64,128`` to ``{"d": [64, 128]}``); every range and domain is checked by
the API the command calls (:mod:`ibcheck.api`), so the command line and a script are refused alike,
before anything runs. :func:`common` is the one parent parser of ``--out``, ``--json`` and ``--workers``.
"""
from __future__ import annotations

import argparse
import fcntl
import math
import os

from ibcheck.errors import InputError, StoreInUse
from ibcheck.theory.argtypes import pos_int
from ibcheck.theory.evaluate import parse_assignments, parse_number


def common(out: str | None = "dir", json: bool = True, workers: int | None = None, out_help: str | None = None,
           out_required: bool = True) -> argparse.ArgumentParser:
    """The parent parser of a command's shared options: ``--out`` (``out="dir"`` or ``"file"``; None: no --out),
    ``--json`` and, with a default, ``--workers``."""
    p = argparse.ArgumentParser(add_help=False)
    if out is not None:
        p.add_argument("--out", required=out_required, default=None,
                       help=out_help or ("output directory (created)" if out == "dir" else "the file to write"))
    if json:
        p.add_argument("--json", action="store_true", help="print the result as JSON (what summary.json holds)")
    if workers is not None:
        p.add_argument("--workers", type=pos_int, default=workers, help="local worker processes (or LocalCluster workers with --dask)")
    return p


def parse_grid(items: list[str] | None) -> dict | None:
    """``["d=64,128,256", "k=2,4,8"]`` -> ``{"d": [64, 128, 256], "k": [2, 4, 8]}`` (the API checks each variable's domain)."""
    if not items:
        return None
    grid: dict[str, list] = {}
    for item in items:
        if "=" not in item:
            raise InputError(f"--grid expects VAR=v1,v2,... (e.g. d=64,128,256), got {item!r}", "grid", item)
        name, vals = item.split("=", 1)
        out: list[int | float] = []
        for v in vals.split(","):
            try:
                x = float(v)
            except ValueError:
                raise InputError(f"--grid {name}: {v!r} is not a number", "grid", item) from None
            if not (math.isfinite(x) and x > 0):
                raise InputError(f"--grid {name}: {v} is out of range: grid values must be numbers > 0", "grid", item)
            out.append(int(x) if x.is_integer() else x)
        if len(set(out)) != len(out):
            raise InputError(f"--grid {name} repeats a value: {vals}", "grid", item)
        if name in grid:
            raise InputError(f"--grid {name} is given twice", "grid", item)
        grid[name] = sorted(out)
    return grid


def parse_constants(text: str | None) -> dict[str, float] | None:
    """``"C=0.5,C1=2"`` -> ``{"C": 0.5, "C1": 2.0}``, each a number > 0 (the API checks that the claim has them)."""
    out: dict[str, float] = {}
    for name, value in parse_assignments(text, "--constants").items():
        x = float(parse_number(name, value, False))
        if not (math.isfinite(x) and x > 0):
            raise InputError(f"--constants {name}={value} is out of range: a constant must be a number > 0", "constants", text)
        out[name] = x
    return out or None


def parse_from(text: str | None) -> dict[str, float] | None:
    """``"T=1e3"`` -> ``{"T": 1000.0}``: fit only rows with T >= 1000."""
    if not text:
        return None
    out = {}
    for name, value in parse_assignments(text, "--from").items():
        try:
            x = float(value)
        except ValueError:
            raise InputError(f"--from {name}={value!r} is not a number", "fit_from", text) from None
        if not (x > 0 and x < float("inf")):
            raise InputError(f"--from {name}={value} is out of range: must be a finite number > 0", "fit_from", text)
        out[name] = x
    return out


def claim_out(args) -> None:
    """Create ``--out`` (a directory this command's own ``mkdir`` made is removed again if the input is refused:
    ``args.created_out``) and hold it under an exclusive lock until the process ends.

    Pitfall avoided: two commands writing one directory (``verdict`` beside a running ``compare``) overwrite each
    other's files; the second is refused in one line instead."""
    missing = []  # the ancestors that do not exist yet, outermost last: --out cmp/x creates cmp/ too, as the help says
    here = os.path.abspath(args.out)
    while not os.path.exists(os.path.dirname(here)) and os.path.dirname(here) != here:
        here = os.path.dirname(here)
        missing.append(here)
    for parent in reversed(missing):
        os.mkdir(parent)
    try:
        os.mkdir(args.out)
        args.created_out = True
    except FileExistsError:
        pass
    if missing:
        args.created_top = missing[-1]  # refused input removes what this command made, its new parents included
    fd = os.open(args.out, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise StoreInUse(f"{args.out} is in use by another comparison or command writing there; wait for it to finish, "
                         "or give another --out", "out", args.out) from None
    args.out_lock = fd  # released when the process ends
