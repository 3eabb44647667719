# One-command entry points. Each target creates .venv on first use (torch's CPU build first,
# so that no dependency pulls the multi-GB CUDA build), then reuses it.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-dev

.PHONY: help setup test demo bench clean

help:
	@echo "make test   - set up .venv and run the test suite"
	@echo "make demo   - set up .venv and print one seeded game between random players"
	@echo "make bench  - engine and env benchmarks (JSON)"

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --disable-pip-version-check -q torch==2.13.0
	$(PY) -m pip install --disable-pip-version-check -q -e '.[dev]'
	touch $(STAMP)

setup: $(STAMP)

test: $(STAMP)
	$(PY) -m pytest

demo: $(STAMP)
	$(PY) -m cf_env.demo --seed 0

bench: $(STAMP)
	$(PY) benchmarks/engine.py
	$(PY) benchmarks/env.py

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build *.egg-info
