"""The user's own data files, read strictly: one reader for ``ibcheck kkt --data`` (an .npz or a .csv of points) and
``ibcheck verdict --data`` (a .csv of measurements).

Every refusal is one :class:`~ibcheck.errors.InputError` naming the file (as the parameter ``name``, ``data`` on the
command line's ``--data``), the value and what is accepted; nothing is executed and nothing is loaded before it is
checked:

* only a regular file is opened (a FIFO, a directory or ``/dev/zero`` behind a symbolic link is refused from its
  ``fstat``, before a byte is read);
* a CSV is UTF-8 (a byte-order mark is not part of the first column's name), each line at most a bounded number of
  bytes, each column named once, and it is read row by row: the reading stops at the first row past the limit, and a
  file too large to hold the limit's rows is refused from its size;
* a number is digits with an optional sign, decimal point and exponent (``-1.5e-3``): ``1_000``, ``nan``, ``inf``,
  ``0x10`` and non-ASCII digits, which Python's ``float`` accepts, are refused;
* an .npz is opened as the zip archive it is: only the named arrays are read, each from its .npy header first
  (shape and dtype checked against the limits before its data are decompressed); numeric dtypes only.

Pitfalls avoided: a 579-byte .npz whose header claims a 7 TiB array raised MemoryError; an unused 1.8 GB array in the
archive was decompressed before the error; a second ``y`` column became a feature; ``1_000`` read as 1000; a cluster
id of 2^64 - 1 became -1.
"""
from __future__ import annotations

import csv
import math
import os
import re
import stat
import sys
import zipfile
from decimal import Decimal, InvalidOperation
from typing import BinaryIO, Iterator

import numpy as np
from numpy.lib import format as npy_format

from ibcheck.theory.argtypes import refused

MAX_FIELD_BYTES = 1000  # one CSV field (a number, a column name, a seed): 1000 bytes is no number anyone writes
INT64_MAX = 2**63 - 1
NUMERIC_KINDS = {"b": "bool", "i": "integer", "u": "unsigned integer", "f": "float"}
NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)
NUMBER_RULE = "digits with an optional sign, decimal point and exponent, e.g. -1.5e-3"
_FILE_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
               (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


# -- the file ----------------------------------------------------------------------------------------------------
def open_regular(path: str, name: str = "data") -> tuple[BinaryIO, int]:
    """``path`` opened for reading in binary, and its size, if it is a regular file (symbolic links followed); else an
    InputError in one line. Opened without blocking (a FIFO would wait for a writer) and checked on the open file."""
    if not isinstance(path, str) or not path.strip():
        raise refused(name, path, "is not accepted: must be the path of a file")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        raise refused(name, path, ": no such file") from None
    except PermissionError:
        raise refused(name, path, "cannot be read: permission denied") from None
    except OSError as err:
        raise refused(name, path, f"cannot be opened: {err.strerror or err}") from None
    try:
        st = os.fstat(fd)
    except OSError as err:  # pragma: no cover - fstat of an open descriptor
        os.close(fd)
        raise refused(name, path, f"cannot be read: {err.strerror or err}") from None
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        what = next((w for test, w in _FILE_KINDS if test(st.st_mode)), "not a regular file")
        real = os.path.realpath(path)
        via = f" (it resolves to {real})" if real != os.path.abspath(path) else ""
        if stat.S_ISDIR(st.st_mode):
            raise refused(name, path, f"is a directory{via}: no such file; give the path of a file")
        raise refused(name, path, f"is {what}{via}, not a regular file: give the path of a file")
    return os.fdopen(fd, "rb"), st.st_size


# -- numbers -----------------------------------------------------------------------------------------------------
def number(text: str) -> float:
    """A finite number written as ``-1.5e-3`` (surrounding spaces ignored); ValueError with the reason otherwise."""
    s = text.strip()
    if not NUMBER.fullmatch(s):
        raise ValueError(f"{text!r} is not a number ({NUMBER_RULE})")
    x = float(s)
    if not math.isfinite(x):
        raise ValueError(f"{s} is out of range (a number is finite: at most about 1.8e308 in size)")
    if abs(x) < sys.float_info.min and Decimal(s) != 0:  # 1e-400 is not 0, nor a subnormal float of a few bits
        raise ValueError(f"{s} is out of range (a nonzero number is at least about 2.2e-308 in size, float64's smallest normal "
                         "number: it would be read as 0 or lose its digits)")
    return x


def int64(text: str, low: int = 0) -> int:
    """An integer in [low, 2^63 - 1] written as a number (``3``, ``3.0``, ``3e2``); ValueError quoting the text as given."""
    s = text.strip()
    if not NUMBER.fullmatch(s):
        raise ValueError(f"{text!r} is not an integer ({NUMBER_RULE})")
    try:
        v = Decimal(s)
    except InvalidOperation:  # pragma: no cover - the pattern admits decimals only
        raise ValueError(f"{text!r} is not an integer") from None
    if not low <= v <= INT64_MAX:
        shown = "-2^63" if low == -INT64_MAX - 1 else str(low)
        raise ValueError(f"{s} is out of range (an integer in [{shown}, 2^63 - 1], an int64, is accepted)")
    if v != v.to_integral_value():
        raise ValueError(f"{s} is not an integer")
    return int(v)


# -- CSV -----------------------------------------------------------------------------------------------------------
class CsvRows:
    """A CSV read strictly, row by row: ``header`` (the stripped column names, each once) and :meth:`rows` (the line
    number and the fields of each data row, as text). Limits: at most ``max_columns`` columns and ``max_rows`` rows
    after the header (blank lines count), each field at most MAX_FIELD_BYTES bytes. Use as a context manager."""

    def __init__(self, path: str, name: str = "data", max_rows: int = 10_000, max_columns: int = 10_000, what: str = ""):
        self.path, self.name, self.max_rows, self.max_columns, self.what = path, name, max_rows, max_columns, what
        self._fh, size = open_regular(path, name)
        try:
            self._line = 0
            self._limit = max_columns * (MAX_FIELD_BYTES + 3) + 2  # the header's line limit (a quoted field: 2 quotes, 1 comma)
            self._reader = csv.reader(self._lines(), strict=True)
            head, blank = self._next(), 0
            while head is not None and not any(h.strip() for h in head) and blank < max_rows:  # blank lines before the header
                head, blank = self._next(), blank + 1
            if head is None or not any(h.strip() for h in head):
                raise refused(name, path, "is empty: it needs a header row (the column names) and data rows")
            self.header = [h.strip() for h in head]
            if len(self.header) > max_columns:
                raise refused(name, path, f"has {len(self.header)} columns: at most {max_columns} are accepted")
            for j, h in enumerate(self.header):
                if not h:
                    raise refused(name, path, f": column {j + 1} of the header has no name (the header is {self._shown()}); name every column")
                if len(h.encode()) > MAX_FIELD_BYTES:
                    raise refused(name, path, f": column {j + 1} of the header has a name of {len(h.encode())} bytes: at most {MAX_FIELD_BYTES}")
            seen: dict[str, int] = {}
            for j, h in enumerate(self.header):
                if h in seen:
                    raise refused(name, path, f": the header names column {h!r} twice (columns {seen[h] + 1} and {j + 1}); "
                                              "each column is named once")
                seen[h] = j
            self._limit = len(self.header) * (MAX_FIELD_BYTES + 3) + 2
            most = (max_rows + 1) * self._limit + 3  # every line at its longest, and a byte-order mark
            if size > most:
                raise refused(name, path, f"is {size} bytes: a CSV of {len(self.header)} columns and at most {max_rows} rows of fields of at "
                                          f"most {MAX_FIELD_BYTES} bytes holds at most {most}{what}")
        except BaseException:
            self._fh.close()
            raise

    def __enter__(self) -> "CsvRows":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._fh.close()

    def _shown(self) -> str:
        text = ", ".join(self.header)
        return text if len(text) <= 120 else text[:100] + "..."

    def _lines(self) -> Iterator[str]:
        """The file's lines, decoded as UTF-8 (a byte-order mark dropped), each at most ``_limit`` bytes."""
        first = True
        while True:
            try:
                raw = self._fh.readline(self._limit + 1)
            except OSError as err:  # /proc/self/mem is a "regular" file that cannot be read
                raise _unreadable(self.name, self.path, err, f" at line {self._line + 1}") from None
            if not raw:
                return
            self._line += 1
            if first:
                first = False
                if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
                    raise refused(self.name, self.path, "is UTF-16 text (it starts with a UTF-16 byte-order mark): save the CSV as UTF-8")
                if raw.startswith(b"\xef\xbb\xbf"):
                    raw = raw[3:]
            if len(raw) > self._limit:
                cols = f"{len(self.header)} columns" if self._line > 1 else f"at most {self.max_columns} columns (the header)"
                raise refused(self.name, self.path, f": line {self._line} cannot be read as CSV: it is longer than {self._limit} bytes (a "
                                                    f"line of {cols} holds fields of at most {MAX_FIELD_BYTES} bytes)")
            if b"\x00" in raw:
                raise refused(self.name, self.path, f": line {self._line} cannot be read as CSV: it holds a NUL byte (a CSV is UTF-8 text)")
            try:
                yield raw.decode("utf-8")
            except UnicodeDecodeError as err:
                raise refused(self.name, self.path, f"is not UTF-8 text (line {self._line} has the byte {raw[err.start:err.start + 1]!r} "
                                                    f"at position {err.start + 1}): save the CSV as UTF-8") from None

    def _next(self) -> list[str] | None:
        try:
            return next(self._reader)
        except StopIteration:
            return None
        except csv.Error as err:
            raise refused(self.name, self.path, f": line {self._line} cannot be read as CSV ({err})") from None

    def rows(self) -> Iterator[tuple[int, list[str]]]:
        """(line number, fields) of each non-blank data row, as many fields as the header; the reading stops past
        ``max_rows`` lines."""
        count = 0
        while (fields := self._next()) is not None:
            count += 1
            if count > self.max_rows:
                raise refused(self.name, self.path, f"has more than {self.max_rows} rows after the header: at most {self.max_rows} "
                                                    f"are accepted{self.what}")
            if not fields or fields == [""]:
                continue  # a blank line
            if len(fields) != len(self.header):
                raise refused(self.name, self.path, f": row {self._line} has {len(fields)} fields, the header {len(self.header)} "
                                                    f"({self._shown()})")
            for j, v in enumerate(fields):
                if len(v.encode()) > MAX_FIELD_BYTES:
                    raise refused(self.name, self.path, f": row {self._line}, column {self.header[j]!r} holds {len(v.encode())} bytes: "
                                                        f"a field holds at most {MAX_FIELD_BYTES}")
            yield self._line, fields


# -- .npz ----------------------------------------------------------------------------------------------------------
def read_npz(path: str, name: str, dims: dict[str, tuple[str, ...]], limits: dict[str, int], required: tuple[str, ...],
             max_elements: int) -> dict[str, np.ndarray]:
    """The arrays ``dims`` names (``{"X": ("n", "d"), "y": ("n",)}``: each array's axes) from the .npz at ``path``: each
    header read first, its dtype numeric (bool, integer, float) and its shape of the named axes, each axis at most
    ``limits[axis]``, all of them at most ``max_elements`` entries; then only these arrays' data are read. The other
    arrays of the archive are never opened; ``required`` ones must be there."""
    fh, _ = open_regular(path, name)
    with fh:
        try:
            magic = fh.read(6)
            fh.seek(0)
        except OSError as err:  # /proc/self/mem is a "regular" file that cannot be read
            raise _unreadable(name, path, err) from None
        try:
            zf = zipfile.ZipFile(fh)
        except OSError as err:
            raise _unreadable(name, path, err) from None
        except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, EOFError) as err:
            if magic == b"\x93NUMPY":
                raise refused(name, path, "is a single .npy array, not an .npz archive: save the arrays with numpy.savez(path, X=X, y=y)") from None
            raise refused(name, path, f"is not an .npz file (a zip archive of .npy arrays): {str(err)[:80]}") from None
        with zf:
            members: dict[str, zipfile.ZipInfo] = {}
            for info in zf.infolist():
                key = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
                if key in members:
                    raise refused(name, path, f"holds two arrays named {key!r}: each array once")
                members[key] = info
            missing = [k for k in required if k not in members]
            if missing:
                held = ", ".join(sorted(members)[:20]) or "nothing"
                raise refused(name, path, f": the .npz must hold arrays {' and '.join(required)} (it holds {held}; "
                                          f"{' and '.join(missing)} missing)")
            wanted = [k for k in dims if k in members]
            headers = {k: _npy_header(zf, members[k], path, name, k) for k in wanted}
            sizes: dict[str, int] = {}
            total = 0
            for k in wanted:
                shape, dtype = headers[k]
                _check_array(path, name, k, shape, dtype, dims[k], limits, sizes)
                total += math.prod(shape)
            if total > max_elements:
                raise refused(name, path, f": its arrays {', '.join(wanted)} hold {total} entries: at most {max_elements} are accepted")
            return {k: _npy_data(zf, members[k], path, name, k) for k in wanted}


def _npy_header(zf: zipfile.ZipFile, info: zipfile.ZipInfo, path: str, name: str, key: str) -> tuple[tuple[int, ...], np.dtype]:
    """(shape, dtype) from the .npy header of one member, its data not read."""
    try:
        with zf.open(info) as m:
            version = npy_format.read_magic(m)
            if version == (1, 0):
                shape, _, dtype = npy_format.read_array_header_1_0(m)
            elif version == (2, 0):
                shape, _, dtype = npy_format.read_array_header_2_0(m)
            else:
                reader = getattr(npy_format, "_read_array_header", None)
                if reader is None:  # pragma: no cover - numpy >= 1.17 has it
                    raise ValueError(f"an .npy format version {version} this numpy cannot read")
                shape, _, dtype = reader(m, version)
    except (ValueError, OSError, EOFError, RuntimeError, NotImplementedError, zipfile.BadZipFile, SyntaxError, TypeError) as err:
        raise refused(name, path, f": the array {key!r} is not a readable .npy array ({_first_line(err)})") from None
    return tuple(int(s) for s in shape), np.dtype(dtype)


def _check_array(path: str, name: str, key: str, shape: tuple[int, ...], dtype: np.dtype, axes: tuple[str, ...], limits: dict[str, int],
                 sizes: dict[str, int]) -> None:
    if dtype.fields is not None or dtype.subdtype is not None or dtype.kind not in NUMERIC_KINDS:
        raise refused(name, path, f": the array {key!r} has dtype {dtype}: numeric dtypes only ({', '.join(NUMERIC_KINDS.values())})")
    if len(shape) != len(axes):
        raise refused(name, path, f": the array {key!r} has shape {shape}: it must be {len(axes)}-D, ({', '.join(axes)}{',' if len(axes) == 1 else ''})")
    for axis, size in zip(axes, shape):
        if size < 0:  # a corrupt header: said of this array, before another array's size is compared with it
            raise refused(name, path, f": the array {key!r} has shape {shape}: {axis} = {size} is negative (a corrupt .npy header)")
        if size > limits[axis]:
            raise refused(name, path, f": the array {key!r} has shape {shape}: {axis} = {size} is out of range: {axis} must be at most {limits[axis]}")
        if axis in sizes and sizes[axis] != size:
            raise refused(name, path, f": the array {key!r} has shape {shape}: its {axis} = {size}, another array's {axis} = {sizes[axis]}")
        sizes[axis] = size


def _npy_data(zf: zipfile.ZipFile, info: zipfile.ZipInfo, path: str, name: str, key: str) -> np.ndarray:
    try:
        with zf.open(info) as m:
            return npy_format.read_array(m, allow_pickle=False)
    except (ValueError, OSError, EOFError, RuntimeError, NotImplementedError, zipfile.BadZipFile, MemoryError) as err:
        raise refused(name, path, f": the array {key!r} cannot be read ({_first_line(err)})") from None


def _unreadable(name: str, path: str, err: OSError, where: str = "") -> Exception:
    """The refusal of a file that opened but cannot be read, said of the reading. Pitfall avoided: ``--data`` linked to
    /proc/self/mem was "cannot write: Input/output error", as if an output had failed."""
    real = os.path.realpath(path)
    via = f" (it resolves to {real})" if real != os.path.abspath(path) else ""
    return refused(name, path, f"cannot be read{where}{via}: {err.strerror or err}")


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0][:100] if text else type(err).__name__


__all__ = ["CsvRows", "MAX_FIELD_BYTES", "NUMBER", "NUMBER_RULE", "int64", "number", "open_regular", "read_npz"]
