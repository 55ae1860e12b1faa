# Three targets: install (idempotent), report (the main job), test.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# torch is pinned here: 2.13.0 is the CPU build available locally; an unpinned
# torch would pull a multi-GB CUDA build. It is installed in the same pip call as the package (one resolution).
TORCH  := torch==2.13.0
# pip byte-compiles one file at a time (about 43 s of a 70 s install); compileall on every core, leaving out the
# packages' own test suites (never imported here), takes about 18 s on 2 cores. (The folder is asked of the venv's
# python when the line runs: make expands a whole recipe before its first line, when the venv may not exist yet.)
SITE   := import sysconfig; print(sysconfig.get_path("purelib"))
REPORT_DIR ?= report
# every module of the package is type-checked in make test (0 errors, no blanket ignores)
TYPED  := ibcheck theory solvers simulate

.PHONY: install report report-full test test-slow bench clean

install: $(STAMP)

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --no-compile $(TORCH) -e '.[test]'
	$(BIN)/python -m compileall -q -j 0 -x '/(tests?|testing)/' "$$($(BIN)/python -c '$(SITE)')" > /dev/null
	touch $(STAMP)

# The comparisons share a 200 s budget (work, in reference seconds): each sweep grows in rounds until it decides.
# Two worker processes: the certified KKT points of FVBS23 and VYS22 (a convex program per network) dominate.
report: install
	$(BIN)/ibcheck report --quick --budget 200 --workers 2 --out $(REPORT_DIR)
	@echo "report written to $(REPORT_DIR)/index.html (and index.md)"

# The full designs (3 networks per sample, 3 seeds, larger grids) with a larger budget: what --quick cannot decide.
# Slow: FVBS23's KKT search runs 300 cover starts a sample at k = 16 (over 14 min a sample at d = 4096; docs/kkt.md).
report-full: install
	$(BIN)/ibcheck report --budget 600 --workers 2 --out $(REPORT_DIR)-full
	@echo "report written to $(REPORT_DIR)-full/index.html (and index.md)"

# mypy (one process, about 10 s) runs beside the tests, where a core would otherwise idle while it ran alone; its output
# is printed after theirs, and either failing fails the target. The package's own modules are byte-compiled first
# (0.4 s): where PYTHONDONTWRITEBYTECODE is set, every test process and every worker it spawns compiled them again
# (measured on one fresh clone: pytest 243 s without, 231 s with).
test: install
	$(BIN)/ruff check theory solvers simulate ibcheck tests bench
	$(BIN)/python -m compileall -q -j 0 theory solvers simulate ibcheck > /dev/null
	@out=$$(mktemp); $(BIN)/mypy $(TYPED) > $$out 2>&1 & m=$$!; \
	echo "$(BIN)/python -m pytest -q -n 2 --dist worksteal (mypy $(TYPED) beside it)"; \
	$(BIN)/python -m pytest -q -n 2 --dist worksteal; t=$$?; \
	wait $$m; y=$$?; echo "mypy $(TYPED):"; cat $$out; rm -f $$out; \
	test $$t -eq 0 && test $$y -eq 0

test-slow: install
	$(BIN)/python -m pytest -q -m slow

bench: install
	$(BIN)/python bench/theory_speed.py
	$(BIN)/python bench/gd_speed.py
	$(BIN)/python bench/radius_speed.py
	$(BIN)/python bench/kkt_speed.py
	$(BIN)/python bench/kkt_recall.py
	$(BIN)/python bench/kkt_time_cap.py
	$(BIN)/python bench/trajectory_scale.py
	$(BIN)/python bench/verdict_calibration.py
	$(BIN)/python bench/binomial_counts.py

clean:
	rm -rf $(VENV) $(REPORT_DIR) .pytest_cache
