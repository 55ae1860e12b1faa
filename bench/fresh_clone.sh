#!/usr/bin/env bash
# `make test`, then `make report`, on a fresh clone of HEAD (install included: the clone has no .venv), and their
# figures recorded in docs/performance.json and docs/performance.md (ids fresh_clone.make_test and
# fresh_clone.make_report; bench/fresh_clone_parse.py reads the logs). About 10 minutes on 2 cores.
#
# Usage: bench/fresh_clone.sh
#   KEEP=1     keep the temp folder (the clone, its report and the two logs)
#   PYTHON=... the python that records (default: .venv/bin/python, else python3)
# Uncommitted changes are not measured: the clone is HEAD's commit.
set -euo pipefail

root=$(git rev-parse --show-toplevel)
cd "$root"
py=${PYTHON:-$root/.venv/bin/python}
[ -x "$py" ] || py=python3
head=$(git rev-parse HEAD)
short=$(git rev-parse --short HEAD)
if [ -n "$(git status --porcelain -- . ':!docs/performance.json' ':!docs/performance.md')" ]; then
    echo "fresh_clone.sh: the working tree has uncommitted changes; the clone measures $short without them" >&2
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ibcheck-fresh-clone.XXXXXX")
cleanup() {
    if [ "${KEEP:-0}" = 1 ]; then echo "fresh_clone.sh: kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT

git clone -q --no-checkout "$root" "$tmp/repo"
git -C "$tmp/repo" checkout -q --detach "$head"
cd "$tmp/repo"
TIMEFORMAT=$'\nreal\t%3lR\nuser\t%3lU\nsys\t%3lS'  # bash's default, set in case the caller's differs
{ python3 "$root/bench/cpu_probe.py"; time make test; } 2>&1 | tee "$tmp/make_test.log"
/usr/bin/time -v make report 2>&1 | tee "$tmp/make_report.log"

cd "$root"
"$py" bench/fresh_clone_parse.py --test-log "$tmp/make_test.log" --report-log "$tmp/make_report.log" \
    --index "$tmp/repo/report/index.md" --commit "$short"
