"""Read the logs of bench/fresh_clone.sh and record its two figures (``fresh_clone.make_test``, ``fresh_clone.make_report``).

The logs: ``{ time make test; }`` (bash's ``real`` line and pytest's summary line) and ``/usr/bin/time -v make report``
(the elapsed wall time and the maximum resident set size), with the clone's ``report/index.md`` (the time the index
states and its rows decided and counted).

Usage: ``python bench/fresh_clone_parse.py --test-log F --report-log F [--index report/index.md] --commit C [--dry-run]``.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

TEST_WHAT = "`make test` on a fresh clone of HEAD (its install included)"
REPORT_WHAT = "`make report` on a fresh clone of HEAD, after its `make test` (installed by it)"
TEST_COMMAND = "`bench/fresh_clone.sh`: `git clone` of HEAD into a temp folder, then `time make test` there"
REPORT_COMMAND = "`bench/fresh_clone.sh`: in that clone, after `make test`, `/usr/bin/time -v make report`"


def duration(seconds: float) -> str:
    """``45 s``, ``3 min 52 s`` or ``1 h 41 min``."""
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


def bash_real(text: str) -> float | None:
    """Seconds of the last ``real 3m52.123s`` line (bash's ``time``)."""
    hits = re.findall(r"^real\s+(?:(\d+)m)?([\d.]+)s\s*$", text, re.M)
    if not hits:
        return None
    m, s = hits[-1]
    return int(m or 0) * 60 + float(s)


def pytest_summary(text: str) -> dict[str, Any]:
    """The counts and seconds of pytest's last summary line, e.g. ``1173 passed, 1 skipped, 3 deselected in 196.42s (0:03:16)``
    (with or without the ``=`` rule around it)."""
    lines = [ln for ln in text.splitlines() if re.search(r"\b\d+ (passed|failed|errors?|skipped)\b.* in [\d.]+s\b", ln)]
    if not lines:
        return {}
    last = lines[-1]
    out: dict[str, Any] = {}
    for n, word in re.findall(r"(\d+) (passed|failed|errors?|skipped|deselected|xfailed|xpassed|warnings?)\b", last):
        out[{"error": "errors", "warning": "warnings"}.get(word, word)] = int(n)
    out["seconds"] = float(re.search(r" in ([\d.]+)s\b", last).group(1))  # type: ignore[union-attr]
    return out


def gnu_time(text: str) -> dict[str, Any]:
    """``/usr/bin/time -v``'s elapsed wall time (seconds) and maximum resident set size (kbytes)."""
    out: dict[str, Any] = {}
    m = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\):\s*(?:(\d+):)?(\d+):([\d.]+)", text)
    if m:
        out["wall_seconds"] = int(m.group(1) or 0) * 3600 + int(m.group(2)) * 60 + float(m.group(3))
    m = re.search(r"Maximum resident set size \(kbytes\):\s*(\d+)", text)
    if m:
        out["max_rss_kb"] = int(m.group(1))
    m = re.search(r"Exit status:\s*(\d+)", text)
    if m:
        out["exit_status"] = int(m.group(1))
    return out


def report_index(text: str) -> dict[str, Any]:
    """What the report's index states: ``in 262 s (computing 242 s, writing 20 s); comparisons 233 s. **12 of 18 rows
    decided and counted**``."""
    out: dict[str, Any] = {}
    m = re.search(r" in (\d+) s \(computing (\d+) s, writing (\d+) s\)", text)
    if m:
        out["seconds"], out["computing"], out["writing"] = (int(x) for x in m.groups())
    m = re.search(r"comparisons (\d+) s\b", text)
    if m:
        out["comparisons"] = int(m.group(1))
    m = re.search(r"(\d+) of (\d+) rows decided and counted", text)
    if m:
        out["decided"], out["rows"] = int(m.group(1)), int(m.group(2))
    return out


def cpu_probe(text: str) -> dict[str, float]:
    """The last ``cpu probe: 1.70 s ...; matmul 18.8 GFLOP/s`` line (bench/cpu_probe.py, run before ``make test``): the
    Python loop's seconds and the one-thread matrix product's GFLOP/s, each where the line has it."""
    lines = re.findall(r"^cpu probe: ([\d.]+) s\b(.*)$", text, re.M)
    if not lines:
        return {}
    loop, rest = lines[-1]
    out = {"loop_seconds": float(loop)}
    m = re.search(r"matmul ([\d.]+) GFLOP/s", rest)
    if m:
        out["matmul_gflops"] = float(m.group(1))
    return out


def parse(test_log: str, report_log: str, index: str = "") -> dict[str, Any]:
    """Everything the two figures say, from the logs' text."""
    return {"test_wall_seconds": bash_real(test_log), "pytest": pytest_summary(test_log), "report": gnu_time(report_log),
            "index": report_index(index), "cpu_probe": cpu_probe(test_log)}


def test_figure(p: dict[str, Any]) -> str:
    py = p["pytest"]
    counts = ", ".join(f"{py[k]} {k}" for k in ("passed", "failed", "errors", "skipped", "xfailed", "xpassed") if py.get(k))
    inner = (f"pytest {py['seconds']:.0f} s: {counts}" if "seconds" in py else "no pytest summary found")
    wall = p["test_wall_seconds"]
    probe = p.get("cpu_probe") or {}
    machine = ""
    if probe:
        machine = f"; the machine (bench/cpu_probe.py): Python loop {probe['loop_seconds']:.2f} s" + (
            f", matmul {probe['matmul_gflops']:.1f} GFLOP/s on one thread" if "matmul_gflops" in probe else "")
    return (f"**{duration(wall)}** wall" if wall is not None else "wall time not found") + f" ({inner}{machine})"


def report_figure(p: dict[str, Any]) -> str:
    r, ix = p["report"], p["index"]
    bits = [f"**{duration(r['wall_seconds'])}** wall" if "wall_seconds" in r else "wall time not found"]
    if "seconds" in ix:
        bits[0] += (f", the index stating {ix['seconds']} s (computing {ix['computing']} s, writing {ix['writing']} s"
                    + (f"; comparisons {ix['comparisons']} s" if "comparisons" in ix else "") + ")")
    if "max_rss_kb" in r:
        bits.append(f"peak {r['max_rss_kb'] / 1024:.0f} MiB (maximum resident set)")
    if "decided" in ix:
        bits.append(f"{ix['decided']} of {ix['rows']} rows decided and counted")
    if r.get("exit_status"):
        bits.append(f"**exit status {r['exit_status']}**")
    return "; ".join(bits)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--test-log", required=True)
    ap.add_argument("--report-log", required=True)
    ap.add_argument("--index", default="", help="the clone's report/index.md")
    ap.add_argument("--commit", required=True, help="the commit the clone measured")
    ap.add_argument("--dry-run", action="store_true", help="print the figures, record nothing")
    args = ap.parse_args(argv)
    idx = Path(args.index) if args.index else None
    p = parse(Path(args.test_log).read_text(errors="replace"), Path(args.report_log).read_text(errors="replace"),
              idx.read_text(errors="replace") if idx and idx.exists() else "")
    figures = {"fresh_clone.make_test": (TEST_WHAT, test_figure(p), TEST_COMMAND, {"wall_seconds": p["test_wall_seconds"], **p["pytest"],
                                                                                   **{f"cpu_probe_{k}": v for k, v in p["cpu_probe"].items()}}),
               "fresh_clone.make_report": (REPORT_WHAT, report_figure(p), REPORT_COMMAND, {**p["report"], **p["index"]})}
    for mid, (what, figure, command, extra) in figures.items():
        print(f"{mid}: {figure}")
        if not args.dry_run:
            from record import record  # bench/ is on the path: this file is run as a script

            record(mid, figure, command, extra, what=what, commit=args.commit)
    return 0


if __name__ == "__main__":
    sys.exit(main())
