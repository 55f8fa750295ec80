# `make play` and `make test` work on a fresh clone: both set up .venv first.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: setup play test bench clean

setup: $(STAMP)

# torch is pinned to the CPU wheel that lies on these machines' disk; any
# other spec would download a multi-gigabyte CUDA build.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[test,train]'
	touch $(STAMP)

play: $(STAMP)
	$(PY) -m engine.gtp $(ARGS)

test: $(STAMP)
	$(PY) -m pytest -q $(PYTEST_ARGS)

bench: $(STAMP)
	$(PY) -m bench.playouts
	$(PY) -m bench.search
	$(PY) -m bench.async

clean:
	rm -rf $(VENV) .pytest_cache
	find . -name __pycache__ -prune -exec rm -rf {} +
