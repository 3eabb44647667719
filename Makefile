# One-command entry points. Each target creates .venv on first use (torch's CPU build first,
# so that no dependency pulls the multi-GB CUDA build), then reuses it.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-dev

RUNS   ?= runs
# make evaluate: 2000 games against 3 heuristic players (the lineup make train's goal is set on),
# 1000 against 3 random and against 3 greedy ones
EVAL_DEAL_SETS ?= 500
BASELINE_DEAL_SETS ?= 250
EVAL_WORKERS ?= 2
# processes that run the tests (pytest-xdist); the tests that start Ray run beside them, in one more
TEST_WORKERS ?= 2
# e.g. TRAIN_FLAGS=--overwrite to train again over an earlier run, or --resume to continue it
# (make train: --resume keeps the collected labels, collects for another collect_minutes, fits again)
TRAIN_FLAGS ?=
# the configs make train and make train-ppo run (the docs' tests run them with the smoke configs)
# make bench: BENCH_FLAGS=--quick for a smoke run of the speed table
BENCH_FLAGS ?=
DISTILL_CONFIG ?= configs/distill.yaml
PPO_CONFIG ?= configs/default.yaml

.PHONY: help setup lint test docs train train-ppo evaluate demo bench clean

help:
	@echo "make train  - set up .venv, distil the search into a network (configs/distill.yaml, ~12 min from a fresh clone), evaluate against the baselines"
	@echo "make train-ppo - the same with self-play PPO (configs/default.yaml, ~12.5 min)"
	@echo "make test   - set up .venv and run the test suite (the docs' code blocks included)"
	@echo "make setup  - only set up .venv (then: source .venv/bin/activate, or call .venv/bin/chickenfoot)"
	@echo "make docs   - set up .venv and build the docs site into docs/_build/html (warnings are errors)"
	@echo "make lint   - set up .venv and run ruff and mypy (configured in pyproject.toml)"
	@echo "make demo   - set up .venv and print one seeded game between random players"
	@echo "make bench  - engine, search and OpenSpiel benchmarks (JSON), then the speed table of docs/performance.md (BENCH_FLAGS=--quick for a smoke run)"
	@echo "make clean  - remove .venv, caches and numba's compiled kernels"

# The core dependencies (numpy, numba; no torch) go in first, so that the numba kernels can compile
# and cache (agents/precompile.py, about a minute) on the core pip leaves idle while it
# installs torch and the extras: a fresh checkout's label workers, evaluations and tests then start
# with them compiled. A failed precompile only means they compile on first use, as before.
$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --disable-pip-version-check -q -e .
	$(PY) -m agents.precompile > $(VENV)/precompile.log 2>&1 & \
	$(PY) -m pip install --disable-pip-version-check -q torch==2.13.0 && \
	$(PY) -m pip install --disable-pip-version-check -q -e '.[dev]' && \
	{ wait $$! && cat $(VENV)/precompile.log || echo "precompile failed ($(VENV)/precompile.log): the kernels compile on first use"; }
	touch $(STAMP)

setup: $(STAMP)

lint: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m mypy

test: $(STAMP)
	@echo "the tests that start Ray run beside the others, one after another; their log follows the others'"
	$(PY) -m pytest -m ray > $(VENV)/ray-tests.log 2>&1 & ray=$$!; \
	$(PY) -m pytest -m "not ray" -n $(TEST_WORKERS); rc=$$?; \
	wait $$ray; ray_rc=$$?; cat $(VENV)/ray-tests.log; \
	test $$rc -eq 0 -a $$ray_rc -eq 0

docs: $(STAMP)
	$(PY) -m sphinx -W --keep-going -q -b html docs docs/_build/html

train: $(STAMP)
	$(VENV)/bin/chickenfoot distill --config $(DISTILL_CONFIG) --runs-dir $(RUNS) --run-name distill $(TRAIN_FLAGS)
	$(MAKE) --no-print-directory evaluate RUN=distill

train-ppo: $(STAMP)
	$(VENV)/bin/chickenfoot train --config $(PPO_CONFIG) --runs-dir $(RUNS) --run-name default $(TRAIN_FLAGS)
	$(MAKE) --no-print-directory evaluate RUN=default

# the new network (1 seat) against three of each baseline, duplicate deals
evaluate: $(STAMP)
	@for opp in random greedy heuristic; do \
	  sets=$(BASELINE_DEAL_SETS); [ $$opp = heuristic ] && sets=$(EVAL_DEAL_SETS); \
	  echo "== $(RUNS)/$(RUN)/final.pt (1 seat) vs 3 x $$opp, $$sets deal sets =="; \
	  $(VENV)/bin/chickenfoot eval $(RUNS)/$(RUN)/final.pt $$opp --deal-sets $$sets --workers $(EVAL_WORKERS) \
	    --json $(RUNS)/$(RUN)/eval_vs_$$opp.json || exit 1; \
	done

demo: $(STAMP)
	$(VENV)/bin/chickenfoot demo --seed 0

# the engine, search and OpenSpiel figures as JSON, then the speed table of docs/performance.md
# (env, batched engine and evaluation, each against its anchor in the same run; about 10 minutes)
bench: $(STAMP)
	$(PY) benchmarks/engine.py
	$(PY) benchmarks/search.py --speed
	$(PY) benchmarks/openspiel.py
	$(PY) benchmarks/table.py $(BENCH_FLAGS)

# numba's cached kernels (__pycache__/*.nbi, *.nbc) go too: numba checks only the timestamp of a
# kernel's own file, so a cached search kernel keeps the engine code it was compiled with after
# cf_env/vector.py changes
clean:
	rm -rf $(VENV) .pytest_cache .hypothesis build *.egg-info
	find cf_env agents training chickenfoot -name '*.nb[ic]' -delete
