"""Workers that stay between evaluations (training.workers.shared_pool): the next evaluation of the
same rules runs on the same processes and gives the one-process report; other rules, a failed use or
a lost worker close the pool; a library a task loads is held to the worker's threads; a caller
that stops reading leaves no queued task behind."""

from __future__ import annotations

import os
import time

import pytest

from cf_env import RulesConfig
from training.evaluate import evaluate
from training.workers import WorkerPool, close_shared_pools, shared_pool

SMALL = RulesConfig(num_players=3, max_pip=6, hand_size=5, rounds=2)
LINEUP = ["heuristic", "greedy", "random"]


def _nothing() -> dict:
    return {}


def _pid(_: int) -> int:
    time.sleep(0.05)  # long enough that both workers get some of the tasks
    return os.getpid()


def _torch_threads(_: int) -> int:
    import torch  # loaded by the task, after the worker started: held to one thread afterwards

    return torch.get_num_threads()


def _slow(i: int, folder: str) -> int:
    time.sleep(0.2)
    open(os.path.join(folder, str(i)), "w").close()
    return i


def _report(workers: int, seed: int = 3) -> tuple:
    r = evaluate(LINEUP, SMALL, deal_sets=6, seed=seed, progress=False, workers=workers)
    return tuple((x.spec, x.win_rate, x.mean_points) for x in r.results), r.per_deal_set


@pytest.fixture(autouse=True)
def _no_pool_left():
    close_shared_pools()
    yield
    close_shared_pools()


def test_the_next_evaluation_of_the_same_rules_runs_on_the_same_workers():
    from training import workers as module

    assert _report(2) == _report(1)
    (key, pool), = module._SHARED.items()
    pids = set(pool.map(_pid, range(8)))
    assert _report(2, seed=4) == _report(1, seed=4)  # fresh agents for each evaluation, as one process has
    assert module._SHARED[key] is pool and set(pool.map(_pid, range(8))) <= pids  # no new process
    evaluate(LINEUP, RulesConfig(num_players=3, max_pip=6, hand_size=5, rounds=1), deal_sets=2, progress=False,
             workers=2)
    assert key not in module._SHARED and pool._executor is None  # other rules: the old pool was closed


def test_a_use_that_raises_closes_the_pool():
    from training import workers as module

    with pytest.raises(KeyboardInterrupt), shared_pool("k", 2, _nothing) as pool:
        raise KeyboardInterrupt
    assert not module._SHARED and pool._executor is None


def test_a_library_a_task_loads_is_held_to_the_workers_threads():
    with WorkerPool(2, _nothing) as pool:
        assert set(pool.map(_torch_threads, range(4))) == {1}  # the first tasks load torch: on one thread already
        assert set(pool.map(_torch_threads, range(4))) == {1}


def test_a_reader_that_stops_leaves_no_queued_task(tmp_path):
    with WorkerPool(2, _nothing) as pool:
        results = pool.imap(_slow, ((i, str(tmp_path)) for i in range(40)), window=16)
        assert next(results) == 0
        finished = len(list(tmp_path.iterdir()))  # counted now: on a busy machine more than the first may be done
        results.close()  # the tasks not yet handed to a process are cancelled
    # what had finished, the two that were running, and what the executor had queued for them (one
    # each, plus one); of the 40, the rest never ran
    assert len(list(tmp_path.iterdir())) <= finished + 2 + 3 < 40
