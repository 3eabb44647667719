"""``python -m agents.precompile`` (make setup runs it beside pip's install of torch) compiles the
kernels with the core dependencies alone."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


def test_precompile_runs_the_search_without_torch():
    code = ("import sys; from agents.precompile import describe, precompile; "
            "print(describe(precompile(specs=['search:ms=0:sims=4:race=2'], threads=False))); "
            "assert 'torch' not in sys.modules, 'precompile imported torch'")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "precompiled in" in done.stdout and "search:ms=0:sims=4:race=2" in done.stdout


@pytest.mark.slow
def test_the_unrefcounted_search_kernels_compile_on_a_fresh_cache(tmp_path):
    """The search's kernels are compiled without numba's reference counting, and numba compiles
    what they call the same way unless the callee says otherwise: a callee that allocates must
    (``cf_env.vector.COUNTED_OPTIONS``). A warm cache hides a missing one (the callee is already
    compiled with counting), so this compiles them in an empty cache: every search setting, and a
    history-reading teacher's label collection."""
    code = """
import numpy as np
from agents import load
from cf_env import RulesConfig, raw_env
from training.labels import collect_labels
config = RulesConfig(num_players=3, max_pip=6, hand_size=5, rounds=2)
env = raw_env(config=config, history=True)
env.reset(seed=3)
specs = ['search:ms=0:sims=8:race=2', 'search:algo=ismcts:ms=0:sims=20', 'search:ms=0:sims=4:infer=policy',
         'search:ms=0:sims=4:rollout=random', 'search:ms=0:sims=4:rollout=greedy:value=win']
searchers = [load(s, config) for s in specs]
while not env.game_over:
    observation = env.observe(env.agent_selection)
    env.step([a.act(observation, np.random.default_rng(0)) for a in searchers][0])
out = collect_labels(load('heuristic', config), load('search:ms=0:sims=4:infer=policy', config),
                     [load('heuristic', config)], config, 1, seed=0)
print('labels', len(out['ret']))
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=900,
                          env={**os.environ, "NUMBA_CACHE_DIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr[-3000:]
    assert "labels" in done.stdout and any(tmp_path.rglob("*.nbi"))  # it compiled into the empty cache
