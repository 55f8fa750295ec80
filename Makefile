# `make play` and `make test` work on a fresh clone: both set up .venv first.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: setup play test bench clean

setup: $(STAMP)

# torch is pinned here to the CPU wheel that lies on these machines' disk
# (pyproject.toml takes a range); any other spec would download a
# multi-gigabyte CUDA build.
# Its output goes to stderr: `make play` on a fresh clone keeps stdout GTP's.
$(STAMP): pyproject.toml
	@echo "make: setting up $(VENV) (once; pip installs the dependencies)" >&2
	@$(PYTHON) -m venv $(VENV) >&2
	@$(PY) -m pip install -q --upgrade pip >&2
	@$(PY) -m pip install -q torch==2.13.0 >&2
	@$(PY) -m pip install -q -e '.[test,train]' >&2
	@touch $(STAMP)

# '@': make does not echo the command, so stdout stays GTP's alone.
play: $(STAMP)
	@$(VENV)/bin/delayed-go $(ARGS)

# The suite runs in TEST_JOBS processes (pytest-xdist), one per core up to 4:
# each test file stays in one process, so that its module fixtures run once.
# TEST_JOBS=0 runs it in this process.
TEST_JOBS ?= $(shell $(PYTHON) -c "import os; print(min(4, len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count() or 1))")

test: $(STAMP)
	$(PY) -m pytest -q -n $(TEST_JOBS) --dist loadfile $(PYTEST_ARGS)

bench: $(STAMP)
	$(PY) -m bench.playouts
	$(PY) -m bench.search
	$(PY) -m bench.async

clean:
	rm -rf $(VENV) .pytest_cache
	find . -name __pycache__ -prune -exec rm -rf {} +
