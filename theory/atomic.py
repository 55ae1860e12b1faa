"""Files written whole or not at all: a temp file in the same directory, then an atomic rename.

A kill at any moment (kill -9 included) leaves either the old file or the new one, never half of
one; the temp file of an interrupted write is removed when Python still can, and is otherwise a
dot-file that no reader opens. Every output of ibcheck (JSON, Markdown, HTML, CSV, PNG, NPZ,
Parquet) goes through :func:`atomic_file`.
"""
from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager

import numpy as np

from .errors import InputError
from .jsonsafe import dumps


@contextmanager
def atomic_file(path: str, mode: str = "wb"):
    """Yield a file object whose content replaces ``path`` only when the block finishes."""
    d = os.path.dirname(os.path.abspath(path))
    if os.path.exists(d) and not os.path.isdir(d):
        raise InputError(f"{path}: {d} is not a directory")
    os.makedirs(d, exist_ok=True)  # missing parents are created, as --out promises (the path was checked before computing)
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".ibcheck-", suffix=".tmp")
    try:
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; a finished file gets the usual umask mode
        with os.fdopen(fd, mode, newline="" if "b" not in mode else None) as f:
            yield f
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _umask() -> int:
    """The process umask (read by setting it and putting it back: there is no getter)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_bytes(path: str, data: bytes) -> None:
    with atomic_file(path, "wb") as f:
        f.write(data)


def write_text(path: str, text: str) -> None:
    with atomic_file(path, "w") as f:
        f.write(text)


def write_json(path: str, obj, indent: int | None = 2) -> None:
    write_text(path, dumps(obj, indent=indent) + ("\n" if indent else ""))


FIGURE_DPI = 110  # the dpi every saved figure is written at (and laid out at: theory.result.new_figure)


def save_figure_file(fig, path: str, dpi: int = FIGURE_DPI) -> None:
    """``fig.savefig`` through a temp file (the format taken from the name's extension)."""
    fmt = os.path.splitext(path)[1].lstrip(".") or "png"
    with atomic_file(path, "wb") as f:
        fig.savefig(f, format=fmt, dpi=dpi)


def save_npz(path: str, **arrays) -> None:
    """``np.savez`` through a temp file (an open file, so numpy adds no extension)."""
    with atomic_file(path, "wb") as f:
        np.savez(f, **arrays)
