"""The measurements CSV has a declared schema (issue 18, item 6): the claim's (or --predict's)
variables, value, and an optional seed; anything else is named and refused, never fitted."""
import pytest

import ibcheck

GOOD = [(d, s, (d ** 0.5) * (1 + 0.01 * s)) for d in (64, 128, 256, 512) for s in range(3)]


def _write(tmp_path, header, rows, bom=False, name="m.csv"):
    path = tmp_path / name
    text = ",".join(header) + "\n" + "\n".join(",".join(str(x) for x in r) for r in rows) + "\n"
    path.write_bytes(("\ufeff" if bom else "").encode() + text.encode())
    return str(path)


def test_a_clean_file_is_consistent(tmp_path):
    v = ibcheck.verdict(_write(tmp_path, ["d", "seed", "value"], GOOD), predict="d=1/2", kind="Theta")
    assert v.verdict == "consistent"


def test_an_extra_numeric_column_is_named_and_refused(tmp_path):
    rows = [(d, s, v, 1000 + i) for i, (d, s, v) in enumerate(GOOD)]
    with pytest.raises(ibcheck.InputError, match="column 'run_id' is not a variable here"):
        ibcheck.verdict(_write(tmp_path, ["d", "seed", "value", "run_id"], rows), predict="d=1/2", kind="Theta")


@pytest.mark.parametrize("bom", [False, True])
def test_seed_in_any_case_and_a_byte_order_mark_are_the_seed_column(tmp_path, bom):
    v = ibcheck.verdict(_write(tmp_path, ["d", "Seed", "VALUE"], GOOD, bom=bom), predict="d=1/2", kind="Theta")
    assert v.verdict == "consistent" and v.record.rows == len(GOOD)


def test_repeated_rows_are_not_extra_seeds(tmp_path):
    with pytest.raises(ibcheck.InputError, match="rows 2 and 14 repeat cell d=64 with seed 0"):
        ibcheck.verdict(_write(tmp_path, ["d", "seed", "value"], GOOD + [GOOD[0]]), predict="d=1/2", kind="Theta")
    noseed = [(d, v) for d, _, v in GOOD]
    with pytest.raises(ibcheck.InputError, match="no seed column"):
        ibcheck.verdict(_write(tmp_path, ["d", "value"], noseed + [noseed[3]]), predict="d=1/2", kind="Theta")


def test_the_command_line_says_it_in_one_line(tmp_path, cli):
    rows = [(d, s, v, 7) for d, s, v in GOOD]
    res = cli("verdict", "--data", _write(tmp_path, ["d", "seed", "value", "run_id"], rows), "--predict", "d=1/2", "--kind", "Theta",
              "--out", str(tmp_path / "o"))
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1 and "run_id" in res.stderr
    assert not (tmp_path / "o").exists()
