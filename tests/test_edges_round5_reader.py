"""Issue 50, item 4: the user's data read strictly, through one reader for ``kkt --data`` and ``verdict --data``.

Each case as it came (CLI or API) plus variants: one line (exit 2, no traceback, nothing written) or an
InputError naming the file and what is accepted, or the right answer. Each test fails if its case comes back."""
from __future__ import annotations

import io
import os
import threading
import time
import zipfile

import numpy as np
import pytest
from numpy.lib import format as npy_format

import ibcheck
from ibcheck.errors import InputError
from ibcheck.simulate.substrate import userdata
from ibcheck.simulate.tools.kkt_search import MAX_D, MAX_N

GOOD_ROWS = "x1,x2,y\n1,0.5,1\n2,1,1\n-1,-0.5,-1\n-2,0.2,-1\n"


def _write(tmp_path, name, content) -> str:
    path = tmp_path / name
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        path.write_bytes(content)
    return str(path)


def _kkt_refused(cli, tmp_path, path: str, *words: str) -> str:
    """``ibcheck kkt --data PATH`` is refused in one line naming --data and each word; nothing is written."""
    out = tmp_path / "out"
    res = cli("kkt", "--data", path, "--starts", "1", "--out", str(out))
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1 and "Traceback" not in res.stderr, res.stderr
    assert lines[0].startswith("ibcheck: error: --data "), lines[0]
    for w in words:
        assert w in lines[0], (w, lines[0])
    assert not out.exists()
    return lines[0]


def _api_refused(path: str, *words: str) -> str:
    with pytest.raises(InputError) as info:
        ibcheck.read_data(path)
    msg = str(info.value)
    assert "\n" not in msg
    for w in words:
        assert w in msg, (w, msg)
    return msg


def _npy_header_only(shape, descr="<f8") -> bytes:
    """An .npy member whose header claims ``shape`` and that holds no data (a few dozen bytes)."""
    buf = io.BytesIO()
    npy_format.write_array_header_1_0(buf, {"descr": descr, "fortran_order": False, "shape": shape})
    return buf.getvalue()


def _npy(a: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, a, allow_pickle=False)
    return buf.getvalue()


def _zip(path, members: dict[str, bytes]) -> str:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for k, v in members.items():
            z.writestr(k, v)
    return str(path)


# -- a CSV header `y,x1,y`: the second y became a feature ------------------------------------------------------------
def test_a_repeated_column_is_refused_not_made_a_feature(cli, tmp_path):
    path = _write(tmp_path, "dup.csv", "y,x1,y\n1,2,1\n-1,3,-1\n")
    _kkt_refused(cli, tmp_path, path, "names column 'y' twice", "columns 1 and 3")
    _api_refused(path, "names column 'y' twice")
    # variants: a repeated feature, a repeated cluster column; and the verdict's CSV through the same reader
    _api_refused(_write(tmp_path, "dup2.csv", "a,a,y\n1,2,1\n-1,3,-1\n"), "names column 'a' twice")
    _api_refused(_write(tmp_path, "dup3.csv", "x,y,cluster,cluster\n1,1,0,0\n-1,-1,1,1\n"), "names column 'cluster' twice")
    with pytest.raises(InputError, match="names column 'd' twice"):
        ibcheck.verdict(_write(tmp_path, "v.csv", "d,d,value\n1,1,1\n2,2,2\n"), predict="d=1/2", kind="Theta")


def test_a_header_column_without_a_name_is_refused(tmp_path):
    _api_refused(_write(tmp_path, "blank.csv", "x,,y\n1,2,1\n"), "column 2 of the header has no name")


# -- datetime64 arrays in an .npz: numeric dtypes only -------------------------------------------------------------------
@pytest.mark.parametrize("X, dtype", [
    (np.array([[1], [2]], dtype="datetime64[D]"), "datetime64[D]"),
    (np.array([[1], [2]], dtype="timedelta64[s]"), "timedelta64[s]"),
    (np.array([[1 + 2j], [2]]), "complex128"),
    (np.array([["a"], ["b"]]), "<U1"),
    (np.zeros((2, 1), dtype=[("a", "f8")]), "[('a', '<f8')]"),
])
def test_an_npz_array_of_a_non_numeric_dtype_is_refused_naming_it(cli, tmp_path, X, dtype):
    path = str(tmp_path / "dt.npz")
    np.savez(path, X=X, y=np.array([1.0, -1.0]))
    _kkt_refused(cli, tmp_path, path, "the array 'X' has dtype", "numeric dtypes only")
    _api_refused(path, f"has dtype {dtype}", "bool, integer, unsigned integer, float")


def test_an_object_array_is_refused_from_its_header_without_unpickling(tmp_path):
    path = _zip(tmp_path / "obj.npz", {"X.npy": _npy_header_only((2, 1), "|O"), "y.npy": _npy(np.array([1.0, -1.0]))})
    _api_refused(path, "has dtype object", "numeric dtypes only")


def test_bool_int_and_float_arrays_are_read(tmp_path):
    path = str(tmp_path / "ok.npz")
    np.savez(path, X=np.array([[True, False], [False, True]]), y=np.array([1, -1], dtype=np.int8), cluster=np.array([0, 1], np.uint8))
    X, y, c = ibcheck.read_data(path)
    assert X.tolist() == [[True, False], [False, True]] and y.tolist() == [1, -1] and c.tolist() == [0, 1]
    np.savez(path, X=np.array([[1, 0], [0, 1]], dtype=np.float16), y=np.array([1, -1], dtype=np.int64))
    X, y, c = ibcheck.read_data(path)
    assert X.dtype == np.float16 and c is None


# -- `1_000` read as 1000: a strict numeric pattern ----------------------------------------------------------------------
@pytest.mark.parametrize("text", ["1_000", "nan", "inf", "-Infinity", "0x10", "\u0661", "\uff11", "1e", "--1", "1,5", "1 000", "True"])
def test_text_python_reads_as_a_number_but_a_csv_does_not_write_is_refused(cli, tmp_path, text):
    path = _write(tmp_path, "n.csv", f'x,y\n"{text}",1\n2,-1\n')
    _kkt_refused(cli, tmp_path, path, "row 2, column 'x'", "is not a number")
    _api_refused(path, f"{text!r} is not a number", "digits with an optional sign")


def test_numbers_are_read_as_written(tmp_path):
    path = _write(tmp_path, "ok.csv", "x1,x2,y\n 1.5e-3 ,+2,1\n.5,5.,-1\n-0,1E2,1\n")
    X, y, c = ibcheck.read_data(path)
    assert X.tolist() == [[0.0015, 2.0], [0.5, 5.0], [0.0, 100.0]] and y.tolist() == [1, -1, 1] and c is None


def test_a_number_past_the_float_range_is_refused_as_written(tmp_path):
    _api_refused(_write(tmp_path, "big.csv", "x,y\n1e999,1\n"), "row 2, column 'x': 1e999 is out of range")


def test_the_verdict_reads_numbers_the_same_way(cli, tmp_path):
    rows = "".join(f"{d},{d ** 0.5}\n" for d in (64, 128, 256))
    path = _write(tmp_path, "v.csv", "d,value\n" + rows + "1_000,3\n")
    res = cli("verdict", "--data", path, "--predict", "d=1/2", "--kind", "Theta", "--out", str(tmp_path / "o"))
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert "row 5, column 'd': '1_000' is not a number" in res.stderr and not (tmp_path / "o").exists()
    with pytest.raises(InputError, match=r"row 5, column 'value': 1e999 is out of range"):
        ibcheck.verdict(_write(tmp_path, "w.csv", "d,value\n" + rows + "512,1e999\n"), predict="d=1/2", kind="Theta")
    with pytest.raises(InputError, match="'nan' is not a number"):
        ibcheck.verdict(_write(tmp_path, "x.csv", "d,value\n" + rows + "512,nan\n"), predict="d=1/2", kind="Theta")


# -- a CSV field over 131072 bytes: the csv module's limit crashed ------------------------------------------------------
@pytest.mark.parametrize("size, words", [(131_073, ["line 3 cannot be read as CSV", "fields of at most 1000 bytes"]),
                                         (2_000, ["row 3, column 'x' holds 2000 bytes: a field holds at most 1000"])])
def test_an_overlong_field_is_one_line(cli, tmp_path, size, words):
    path = _write(tmp_path, "long.csv", "x,y\n1,1\n" + "9" * size + ",-1\n")
    _kkt_refused(cli, tmp_path, path, *words)
    _api_refused(path, *words)


def test_an_overlong_quoted_field_over_lines_is_one_line(tmp_path):
    path = _write(tmp_path, "q.csv", 'x,y\n"' + "1\n" * 100_000 + '",1\n')
    _api_refused(path, "cannot be read as CSV")


# -- a Latin-1 CSV: UnicodeDecodeError -----------------------------------------------------------------------------------
def test_a_latin1_csv_is_refused_naming_utf8(cli, tmp_path):
    path = _write(tmp_path, "lat.csv", "x,y,caf\xe9\n1,1,2\n-1,-1,3\n".encode("latin-1"))
    _kkt_refused(cli, tmp_path, path, "is not UTF-8 text", "save the CSV as UTF-8")
    _api_refused(path, "is not UTF-8 text (line 1 has the byte b'\\xe9'")
    with pytest.raises(InputError, match="is not UTF-8 text"):  # the verdict's CSV, the same reader
        ibcheck.verdict(path, predict="x=1/2", kind="Theta")


def test_utf16_and_nul_bytes_are_refused_in_one_line(tmp_path):
    _api_refused(_write(tmp_path, "u16.csv", GOOD_ROWS.encode("utf-16")), "is UTF-16 text", "save the CSV as UTF-8")
    _api_refused(_write(tmp_path, "nul.csv", b"x,y\n1\x00,1\n"), "line 2 cannot be read as CSV: it holds a NUL byte")


# -- a 579-byte .npz whose header claims a 7 TiB array: MemoryError ------------------------------------------------------
def test_an_npz_header_claiming_a_huge_array_is_refused_before_loading(cli, tmp_path):
    path = _zip(tmp_path / "huge.npz", {"X.npy": _npy_header_only((1_000_000, 1_000_000)), "y.npy": _npy(np.array([1.0, -1.0]))})
    assert os.path.getsize(path) < 1000
    _kkt_refused(cli, tmp_path, path, "has shape (1000000, 1000000)", f"n must be at most {MAX_N}")
    _api_refused(path, "the array 'X' has shape (1000000, 1000000)")


@pytest.mark.parametrize("members, words", [
    ({"X.npy": _npy_header_only((4, 3_000_000)), "y.npy": _npy_header_only((4,))}, [f"d must be at most {MAX_D}"]),
    ({"X.npy": _npy(np.ones((2, 2))), "y.npy": _npy_header_only((10**12,))}, ["the array 'y' has shape (1000000000000,)"]),
    ({"X.npy": _npy(np.ones((2, 2))), "y.npy": _npy_header_only((3,))}, ["its n = 3, another array's n = 2"]),
    ({"X.npy": _npy(np.ones((2, 2, 2))), "y.npy": _npy(np.ones(2))}, ["has shape (2, 2, 2): it must be 2-D"]),
    ({"X.npy": _npy_header_only((7000, 7500)), "y.npy": _npy_header_only((7000,))}, ["hold 52507000 entries: at most 50000000"]),
    ({"X.npy": b"\x93NUMPY\x01\x00garbage", "y.npy": _npy(np.ones(2))}, ["the array 'X' is not a readable .npy array"]),
    ({"X.npy": _npy(np.ones((2, 2)))[:-8], "y.npy": _npy(np.ones(2))}, ["the array 'X' cannot be read"]),
    ({"X.npy": _npy(np.ones((2, 2)))}, ["must hold arrays X and y", "y missing"]),
])
def test_npz_shapes_and_headers_are_checked_before_the_data(tmp_path, members, words):
    _api_refused(_zip(tmp_path / "a.npz", members), *words)


def test_a_zip_with_an_array_named_twice_is_refused(tmp_path):
    path = tmp_path / "twice.npz"
    with pytest.warns(UserWarning):  # zipfile warns of the duplicate name, and writes it
        _zip(path, {"X.npy": _npy(np.ones((2, 2))), "y.npy": _npy(np.array([1.0, -1.0]))})
        with zipfile.ZipFile(path, "a") as z:
            z.writestr("X.npy", _npy(np.zeros((2, 2))))
    _api_refused(str(path), "holds two arrays named 'X'")


# -- an .npy renamed .npz: TypeError --------------------------------------------------------------------------------------
def test_an_npy_renamed_npz_is_one_line(cli, tmp_path):
    path = _write(tmp_path, "a.npz", _npy(np.ones((2, 2))))
    _kkt_refused(cli, tmp_path, path, "is a single .npy array, not an .npz archive", "numpy.savez")
    _api_refused(_write(tmp_path, "b.npz", b"x,y\n1,1\n"), "is not an .npz file (a zip archive of .npy arrays)")
    _api_refused(_write(tmp_path, "c.npz", b""), "is not an .npz file")


# -- an .npz holding an unused 1.8 GB compressed array: decompressed before the error -----------------------------------
def test_only_the_named_arrays_are_read(tmp_path, monkeypatch):
    path = str(tmp_path / "extra.npz")
    X, y = np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([1.0, -1.0])
    np.savez_compressed(path, X=X, y=y, unused=np.zeros((2000, 1000)), cluster=np.array([0, 1]))
    opened: list[str] = []
    real_open = zipfile.ZipFile.open

    def spy(self, name, *args, **kwargs):
        opened.append(name.filename if isinstance(name, zipfile.ZipInfo) else name)
        return real_open(self, name, *args, **kwargs)

    monkeypatch.setattr(zipfile.ZipFile, "open", spy)
    Xr, yr, c = ibcheck.read_data(path)
    assert np.array_equal(Xr, X) and np.array_equal(yr, y) and c.tolist() == [0, 1]
    assert opened and set(opened) == {"X.npy", "y.npy", "cluster.npy"}, opened


def test_an_unused_array_whose_header_claims_terabytes_is_never_opened(tmp_path):
    """The same, without a spy: an unused member that would fail (a 7 TiB object array, then a truncated one) is not read."""
    good = {"X.npy": _npy(np.array([[1.0, 0.0], [0.0, 1.0]])), "y.npy": _npy(np.array([1.0, -1.0]))}
    for junk in (_npy_header_only((1_000_000, 1_000_000), "|O"), b"not an array"):
        X, y, c = ibcheck.read_data(_zip(tmp_path / "j.npz", {**good, "junk.npy": junk}))
        assert X.shape == (2, 2) and y.tolist() == [1.0, -1.0] and c is None


# -- 4 x 3,000,000 and 200,000 x 2 arrays accepted: the limit was skipped for user arrays --------------------------------
@pytest.mark.parametrize("shape, words", [((4, 3_000_000), "d = 3000000 is out of range: d must be at most 10000"),
                                          ((200_000, 2), "n = 200000 is out of range: n must be at most 10000")])
def test_user_arrays_have_the_limits_of_generated_data(shape, words):
    X = np.zeros(shape)
    X[0, 0], X[1, 1] = 1.0, 2.0
    y = np.where(np.arange(shape[0]) % 2 == 0, 1.0, -1.0)
    with pytest.raises(InputError, match=words):
        ibcheck.kkt_points(X=X, y=y, starts=1)


def test_the_limits_hold_at_the_limit_for_csv_files(cli, tmp_path):
    ok = _write(tmp_path, "wide.csv", ",".join([f"x{j}" for j in range(MAX_D)] + ["y"]) + "\n" + ",".join(["0"] * MAX_D + ["1"]) + "\n")
    X, _, _ = ibcheck.read_data(ok)
    assert X.shape == (1, MAX_D)
    wide = _write(tmp_path, "wider.csv", ",".join([f"x{j}" for j in range(MAX_D + 1)] + ["y"]) + "\n" + ",".join(["0"] * (MAX_D + 2)) + "\n")
    _kkt_refused(cli, tmp_path, wide, f"has {MAX_D + 1} feature columns: d must be at most {MAX_D}")
    tall = _write(tmp_path, "tall.csv", "x,y\n" + "1,1\n" * (MAX_N + 1))
    _kkt_refused(cli, tmp_path, tall, f"has more than {MAX_N} rows after the header: at most {MAX_N} are accepted")
    X, _, _ = ibcheck.read_data(_write(tmp_path, "tallest.csv", "x,y\n" + "1,1\n" * MAX_N))
    assert X.shape == (MAX_N, 1)


# -- a 2 GB sparse CSV read to its end before the error -------------------------------------------------------------------
def test_a_file_too_large_for_the_limits_is_refused_from_its_size(cli, tmp_path):
    path = tmp_path / "sparse.csv"
    with open(path, "wb") as f:
        f.write(GOOD_ROWS.encode())
        f.truncate(2 * 1024**3)  # a sparse file: 2 GiB of NUL bytes that take no disk
    start = time.monotonic()
    _kkt_refused(cli, tmp_path, str(path), f"is {2 * 1024**3} bytes", "holds at most")
    assert time.monotonic() - start < 20


def test_the_reading_stops_at_the_first_row_past_the_limit(tmp_path):
    """Rows past the limit, then a line that is not UTF-8: a reader that reads to the end says the encoding instead."""
    path = _write(tmp_path, "over.csv", ("x,y\n" + "1,1\n" * (MAX_N + 5)).encode() + b"\xff\xfe,1\n")
    _api_refused(path, f"has more than {MAX_N} rows")
    # the reader at a small limit (the verdict's is 1,000,000 rows): the rows past it are never decoded
    small = _write(tmp_path, "small.csv", b"x,y\n1,1\n1,1\n1,1\n1,1\n\xff\xfe,1\n")
    with userdata.CsvRows(small, "data", max_rows=3, max_columns=10) as table:
        with pytest.raises(InputError, match="has more than 3 rows"):
            list(table.rows())


def test_a_huge_single_line_is_refused_after_its_first_bytes(tmp_path):
    path = tmp_path / "line.csv"
    with open(path, "wb") as f:
        f.write(b"x,y\n1,1\n" + b"1," * 5_000_000)  # 10 MB in one line (the file is within the size 10,000 rows could take)
    _api_refused(str(path), "line 3 cannot be read as CSV: it is longer than 2008 bytes")
    with open(path, "wb") as f:
        f.write(b"," * (20 * 1024 * 1024))  # a header of 20 MiB: longer than any header of at most 10,002 columns
    _api_refused(str(path), "line 1 cannot be read as CSV: it is longer than")


# -- a BOM-prefixed CSV: "needs a column named y (it has \ufeffy, ...)" ---------------------------------------------------
def test_a_byte_order_mark_is_not_part_of_the_first_name(tmp_path):
    X, y, c = ibcheck.read_data(_write(tmp_path, "bom.csv", "\ufeffy,x1\n1,2\n-1,3\n"))  # was: "a column named y (it has \ufeffy, x1)"
    assert X.tolist() == [[2.0], [3.0]] and y.tolist() == [1.0, -1.0] and c is None
    X, y, c = ibcheck.read_data(_write(tmp_path, "bom2.csv", "\ufeff" + GOOD_ROWS))  # and a first feature keeps its name's column
    assert X.tolist()[0] == [1.0, 0.5] and y.tolist() == [1, 1, -1, -1]


# -- a FIFO, or a symlink to /dev/zero: "no such file" ---------------------------------------------------------------------
def _in_thread(fn, timeout=20):
    """fn() in a daemon thread: a read that blocks (a FIFO without a writer) fails the test instead of hanging it."""
    box: dict = {}

    def run():
        try:
            box["value"] = fn()
        except BaseException as err:  # noqa: BLE001 - handed to the test
            box["error"] = err

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(timeout)
    assert not t.is_alive(), "the reader blocked"
    return box


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
@pytest.mark.parametrize("suffix", [".csv", ".npz"])
def test_a_fifo_is_refused_without_blocking(cli, tmp_path, suffix):
    path = str(tmp_path / f"pipe{suffix}")
    os.mkfifo(path)
    box = _in_thread(lambda: cli("kkt", "--data", path, "--out", str(tmp_path / "o")))
    res = box["value"]
    assert res.returncode == 2 and "is a FIFO (named pipe), not a regular file" in res.stderr and "no such file" not in res.stderr
    box = _in_thread(lambda: ibcheck.verdict(path, predict="d=1/2", kind="Theta"))
    assert isinstance(box["error"], InputError) and "is a FIFO" in str(box["error"])


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_a_link_to_a_device_is_refused_saying_where_it_leads(cli, tmp_path):
    path = tmp_path / "zero.npz"
    os.symlink("/dev/zero", path)
    box = _in_thread(lambda: _kkt_refused(cli, tmp_path, str(path), "is a character device", "it resolves to /dev/zero"))
    assert "error" not in box, box.get("error")
    _api_refused(str(path), "not a regular file")
    csv_link = tmp_path / "zero.csv"
    os.symlink("/dev/zero", csv_link)
    with pytest.raises(InputError, match="is a character device"):
        ibcheck.verdict(str(csv_link), predict="d=1/2", kind="Theta")


def test_missing_files_directories_and_broken_links_are_one_line(tmp_path):
    _api_refused(str(tmp_path / "missing.csv"), "no such file")
    _api_refused(str(tmp_path), "is a directory")
    os.symlink(tmp_path / "nowhere.npz", tmp_path / "broken.npz")
    _api_refused(str(tmp_path / "broken.npz"), "no such file")
    _api_refused(_write(tmp_path, "d.txt", GOOD_ROWS), "a file ending in .npz or .csv")
    X, y, _ = ibcheck.read_data(_write(tmp_path, "UPPER.CSV", GOOD_ROWS))  # the suffix in any case
    assert X.shape == (4, 2)


# -- cluster ids 2^64 - 1 and 1e300 quoted as -1 and -9223372036854775808 -------------------------------------------------
@pytest.mark.parametrize("text", ["18446744073709551615", "1e300", "9223372036854775808", "-1", "-9223372036854775809"])
def test_cluster_ids_outside_int64_are_refused_as_written(cli, tmp_path, text):
    path = _write(tmp_path, "c.csv", f"x,y,cluster\n1,1,{text}\n-1,-1,1\n")
    line = _kkt_refused(cli, tmp_path, path, f"row 2, column 'cluster': {text} is out of range", "int64")
    assert "-9223372036854775808" not in line.replace(text, "")


@pytest.mark.parametrize("text, words", [("3.5", "3.5 is not an integer"), ("1_0", "'1_0' is not an integer"), ("nan", "'nan' is not an integer")])
def test_cluster_ids_that_are_not_integers_are_refused_as_written(tmp_path, text, words):
    _api_refused(_write(tmp_path, "c.csv", f"x,y,cluster\n1,1,{text}\n-1,-1,1\n"), words)


def test_an_integral_cluster_id_written_as_a_decimal_is_read(tmp_path):
    X, y, c = ibcheck.read_data(_write(tmp_path, "c.csv", "x,y,cluster\n1,1,3.0\n-1,-1,1e1\n2,1,9223372036854775807\n"))
    assert c.dtype == np.int64 and c.tolist() == [3, 10, 2**63 - 1]


@pytest.mark.parametrize("cluster, shown", [
    (np.array([2**64 - 1, 1], dtype=np.uint64), "18446744073709551615"),
    (np.array([1e300, 1.0]), "1e+300"),
    (np.array([2.0**63, 1.0]), "9.223372036854776e+18"),
    (np.array([0.5, 1.0]), "0.5"),
    (np.array([np.inf, 1.0]), "inf"),
    (np.array([-1, 1]), "-1"),
])
def test_cluster_arrays_outside_int64_are_refused_quoting_the_value_given(cli, tmp_path, cluster, shown):
    X, y = np.array([[1.0, 0.0], [-1.0, 0.5]]), np.array([1.0, -1.0])
    with pytest.raises(InputError) as info:
        ibcheck.kkt_points(X=X, y=y, cluster=cluster, starts=1)
    assert str(info.value).startswith(f"cluster[0] = {shown}: cluster ids must be integers in [0, 2^63 - 1]"), str(info.value)
    path = str(tmp_path / "c.npz")
    np.savez(path, X=X, y=y, cluster=cluster)
    _kkt_refused(cli, tmp_path, path, f"cluster[0] = {shown}")


def test_the_number_helpers_refuse_what_float_and_int_accept():
    for text in ["1_000", "nan", "inf", " ", "", "0b1", "\u0663", "1e5_0"]:
        with pytest.raises(ValueError):
            userdata.number(text)
    assert userdata.number(" -1.5e-3 ") == -1.5e-3 and userdata.int64("12") == 12 and userdata.int64("1.2e1") == 12
    with pytest.raises(ValueError, match="out of range"):
        userdata.int64("1e99999999999")


def test_blank_lines_empty_files_and_too_many_columns(tmp_path):
    X, y, _ = ibcheck.read_data(_write(tmp_path, "b.csv", "\n\nx,y\n1,1\n\n-1,-1\n"))  # blank lines are skipped, not rows
    assert X.tolist() == [[1.0], [-1.0]] and y.tolist() == [1.0, -1.0]
    _api_refused(_write(tmp_path, "e.csv", "\n \n"), "is empty: it needs a header row")
    _api_refused(_write(tmp_path, "h.csv", "x,y\n"), "has a header but no rows")
    _api_refused(_write(tmp_path, "f.csv", "x,y\n1,1\n2\n"), "row 3 has 1 fields, the header 2")
    _api_refused(_write(tmp_path, "w.csv", ",".join(f"x{j}" for j in range(MAX_D + 3)) + "\n"), f"has {MAX_D + 3} columns: at most {MAX_D + 2}")
    _api_refused(_write(tmp_path, "n.csv", "x1,x2\n1,1\n"), "the header needs a column named y (it has x1, x2)")
    _api_refused(_write(tmp_path, "o.csv", "y,cluster\n1,0\n"), "has no feature column")
