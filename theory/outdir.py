"""Where a command writes: checked before any computing, and every path kept inside ``--out``.

Pitfalls avoided:
* a folder name built from user text (a claim id such as ``../../etc`` or ``/tmp/x``) that lands
  outside the output directory: :func:`inside` resolves the path and refuses it;
* an ``--out`` that is a file, or a directory nobody can write, found after minutes of computing
  (and then an internal error): :func:`check_out` probes it first, by creating and removing a
  temp file, which also works where permission bits lie (root, read-only mounts).
"""
from __future__ import annotations

import os
import re
import tempfile

from .errors import InputError

# A claim id: letters, digits, '.', '_' and '-', starting with a letter (it names folders and files).
CLAIM_ID_PATTERN = re.compile(r"[A-Za-z][A-Za-z0-9._-]{0,99}")
CLAIM_ID_RULE = "letters, digits, '.', '_' and '-', starting with a letter, at most 100 characters (e.g. ABC25.thm.1)"


def check_claim_id(claim_id: object) -> str:
    """The id itself, or :class:`InputError` naming the rule."""
    if not isinstance(claim_id, str) or not CLAIM_ID_PATTERN.fullmatch(claim_id):
        raise InputError(f"claim id={claim_id!r} is not accepted: an id has {CLAIM_ID_RULE}")
    return claim_id


def slug(claim_id: str) -> str:
    """The folder (and file-name part) of a claim id: the id itself, checked first (its characters are safe in a
    path), so that the map is injective; the registry refuses two ids that differ only in case, which a
    case-insensitive file system would merge.

    Pitfall avoided: ``.`` written as ``_`` sent ``COL.thm.1`` and ``COL_thm_1`` to one folder; the index linked
    the first claim's row to the second's report, and the first report was overwritten."""
    return check_claim_id(claim_id)


def inside(root: str, *parts: str) -> str:
    """``root/parts...``, refused unless it resolves inside ``root`` (symbolic links followed)."""
    path = os.path.join(root, *parts)
    top, real = os.path.realpath(root), os.path.realpath(path)
    if real != top and not real.startswith(top.rstrip(os.sep) + os.sep):
        raise InputError(f"refusing to write {path}: it resolves to {real}, outside --out {root}")
    return path


def _nearest_existing(path: str) -> str:
    p = os.path.abspath(path)
    while not os.path.exists(p):
        parent = os.path.dirname(p)
        if parent == p:
            break
        p = parent
    return p


def _followable(path: str, flag: str) -> None:
    """Refuse a path with a ``..`` right after a folder that does not exist: the system cannot follow it
    (``nosuch/../x``), while a lexical reading (``os.path.abspath``) drops both, so the check and the folders made
    for the output went to one place and the write failed at another, leaving those folders behind."""
    cursor = "" if not os.path.isabs(path) else os.sep
    for part in path.split(os.sep):
        if part in ("", "."):
            continue
        if part == ".." and cursor and not os.path.isdir(cursor):
            raise InputError(f"{flag} {path}: {cursor} does not exist, so the '..' after it cannot be followed "
                             "(give the path without that part)")
        cursor = os.path.join(cursor, part) if cursor else part


def _probe(directory: str, flag: str, shown: str) -> None:
    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".ibcheck-probe-")
    except OSError as err:
        raise InputError(f"{flag} {shown}: cannot write in {directory} ({err.strerror or type(err).__name__})") from None
    os.close(fd)
    os.unlink(tmp)


def check_out(path: object, kind: str = "dir", overwrite: bool = True, flag: str = "--out") -> str:
    """Check an output path before computing: ``kind="dir"`` for a directory (created later, parents
    included), ``"file"`` for one file. Refused with one line: an empty or non-string path, a file where
    a directory is wanted (and the reverse), a non-empty directory without ``overwrite``, a place that
    cannot be written. Nothing is created."""
    if not isinstance(path, (str, os.PathLike)) or not str(path).strip():
        raise InputError(f"{flag} {path!r} is not a path")
    path = os.fspath(path)
    if "\x00" in path:
        raise InputError(f"{flag} {path!r} is not a path (it contains a NUL byte)")
    _followable(path, flag)
    if kind == "dir":
        if os.path.exists(path) and not os.path.isdir(path):
            raise InputError(f"{flag} {path} exists and is not a directory")
        if os.path.isdir(path) and not overwrite and os.listdir(path):
            raise InputError(f"{flag} {path} exists and is not empty (pass --overwrite to replace it)")
    elif os.path.isdir(path):
        raise InputError(f"{flag} {path} is a directory: give a file name")
    base = _nearest_existing(path if kind == "dir" else os.path.dirname(os.path.abspath(path)))
    if not os.path.isdir(base):
        raise InputError(f"{flag} {path}: {base} is not a directory")
    _probe(base, flag, path)
    return path


def check_out_dir(out: str, overwrite: bool) -> None:
    """Fail early (one line) when the run directory cannot be written; missing parents are created later, like
    ``--out`` everywhere (the nearest existing ancestor must be a writable directory)."""
    _followable(out, "--out")
    if os.path.exists(out) and not os.path.isdir(out):
        raise InputError(f"--out {out} exists and is not a directory")
    if os.path.isdir(out) and os.listdir(out) and not overwrite:
        raise InputError(f"--out {out} exists and is not empty (pass --overwrite to replace it)")
    base = _nearest_existing(os.path.dirname(os.path.abspath(out)) or ".")
    if not os.path.isdir(base):
        raise InputError(f"--out {out}: {base} is not a directory")
    if not os.access(base, os.W_OK):
        raise InputError(f"--out {out}: {base} is not writable")
