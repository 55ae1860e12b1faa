"""Files written whole or not at all: a temp file in the same directory, then an atomic rename.

A kill at any moment (kill -9 included) leaves either the old file or the new one, never half of
one; the temp file of an interrupted write is removed when Python still can, and is otherwise a
dot-file that no reader opens. Every output of ibcheck (JSON, Markdown, HTML, CSV, PNG, NPZ,
Parquet) goes through :func:`atomic_file`.
"""
from __future__ import annotations

import os
import re
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


# control characters (C0 but tab and newline, DEL, C1), the bidirectional overrides, embeddings, isolates and marks, and the
# zero-width space, word joiner and BOM (they hide where one name ends: "safe\u200bname" prints as "safename"):
# in a report or a terminal they ring, clear lines or reorder what is shown (U+202E writes "fdp.exe" as "exe.pdf")
_INVISIBLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b\u200e\u200f\u202a-\u202e\u2060\u2066-\u2069\u061c\ufeff]")


def visible_text(text: object) -> str:
    """Text with every control and bidirectional-formatting character shown as its escape (``\\u202e``), so that it
    cannot ring, move the cursor or reorder what a page or a terminal shows."""
    return _INVISIBLE.sub(lambda m: f"\\u{ord(m.group()):04x}", str(text))


def literal_text(fig) -> None:
    """Every title, axis label, legend entry and annotation of ``fig`` drawn as written, never parsed as mathtext
    (tick labels keep theirs: a log axis's 10^k). Returns None; call it before laying out or saving.

    Pitfall avoided: text from a claim or a file (a bound quantity ``cost_$``, a title with ``$x^{``) reached a
    matplotlib title as mathtext, and an unbalanced ``$`` raised "internal error" at layout: exit 1, no report. The
    report's own formulas in figures are written in Unicode (½‖θ‖²), so nothing relies on mathtext here."""
    for ax in fig.axes:
        texts = [ax.title, getattr(ax, "_left_title", None), getattr(ax, "_right_title", None), ax.xaxis.label,
                 ax.yaxis.label, *ax.texts]
        leg = ax.get_legend()
        if leg is not None:
            texts += [*leg.get_texts(), leg.get_title()]
        for t in texts:
            if t is not None:
                t.set_parse_math(False)
                t.set_text(visible_text(t.get_text()))  # a bell or U+202E in a title: shown as its escape, not drawn
    for t in [*fig.texts, *([fig._suptitle] if getattr(fig, "_suptitle", None) is not None else [])]:
        t.set_parse_math(False)
        t.set_text(visible_text(t.get_text()))
    leg = getattr(fig, "legends", [])
    for lg in leg:
        for t in [*lg.get_texts(), lg.get_title()]:
            t.set_parse_math(False)


def save_figure_file(fig, path: str, dpi: int = FIGURE_DPI) -> None:
    """``fig.savefig`` through a temp file (the format taken from the name's extension), its text drawn as written
    (:func:`literal_text`)."""
    literal_text(fig)
    fmt = os.path.splitext(path)[1].lstrip(".") or "png"
    with atomic_file(path, "wb") as f:
        fig.savefig(f, format=fmt, dpi=dpi)


def save_npz(path: str, **arrays) -> None:
    """``np.savez`` through a temp file (an open file, so numpy adds no extension)."""
    with atomic_file(path, "wb") as f:
        np.savez(f, **arrays)
