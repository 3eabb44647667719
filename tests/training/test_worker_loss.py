"""No work lost when a worker dies (training.workers.WorkerPool.imap): a killed worker process's
tasks run again on a new pool, the results are the one-process results, in order; a task that kills
every worker it is given is a clear error; workers whose parent is killed leave too."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from cf_env import RulesConfig
from training.evaluate import evaluate
from training.workers import WorkerLostError, WorkerPool

SMALL = RulesConfig(num_players=3, max_pip=6, hand_size=5, rounds=2)


def _nothing() -> dict:
    return {}


def _square_or_die(i: int, marker: str, always: bool = False) -> int:
    """``i * i``; task 3 kills its process the first time (every time with ``always``)."""
    if i == 3 and (always or not os.path.exists(marker)):
        Path(marker).touch()
        os._exit(1)
    return i * i


class KillOnce:
    """A deal-set hook that kills the process that played deal set ``d``, once."""

    def __init__(self, marker: str, d: int) -> None:
        self.marker, self.d = marker, d

    def __call__(self, d, games, seatings, agents):
        if d == self.d and not os.path.exists(self.marker):
            Path(self.marker).touch()
            os._exit(1)
        return d


def test_a_killed_worker_process_loses_no_task(tmp_path):
    marker = str(tmp_path / "died")
    with pytest.warns(RuntimeWarning, match="worker process died"), WorkerPool(2, _nothing) as pool:
        out = list(pool.imap(_square_or_die, ((i, marker) for i in range(10)), window=3))
        assert pool.lost == 1
    assert out == [i * i for i in range(10)] and os.path.exists(marker)


def test_a_task_that_kills_every_worker_is_a_clear_error(tmp_path):
    with pytest.warns(RuntimeWarning), WorkerPool(2, _nothing) as pool, \
            pytest.raises(WorkerLostError, match="task 3 lost its worker 2 times"):
        list(pool.imap(_square_or_die, ((i, str(tmp_path / "m"), True) for i in range(6)), max_tries=2))


def test_an_evaluation_whose_worker_dies_equals_the_one_process_report(tmp_path):
    kwargs = {"deal_sets": 6, "seed": 4, "progress": False}
    alone = evaluate(["heuristic", "random"], SMALL, **kwargs)
    with pytest.warns(RuntimeWarning, match="worker process died"):
        hit = evaluate(["heuristic", "random"], SMALL, workers=2, on_deal_set=KillOnce(str(tmp_path / "died"), 2),
                       **kwargs)
    assert (tmp_path / "died").exists() and hit.hook_results == list(range(6))
    assert hit.per_deal_set == alone.per_deal_set
    for a, b in zip(alone.results, hit.results):
        assert (a.spec, a.win_rate, a.mean_points, a.rating) == (b.spec, b.win_rate, b.mean_points, b.rating)
    assert np.isfinite(hit.ms_per_game)


def _running(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie waiting to be reaped has ended)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_workers_leave_when_their_parent_is_killed(tmp_path):
    """A parent killed without closing its pool (SIGKILL: no handler, no atexit) leaves no worker
    behind: each waits on its parent's end, not only on the task queue, whose pipe every worker
    holds open."""
    script = tmp_path / "parent.py"
    script.write_text(textwrap.dedent("""
        import os, time
        from training.workers import WorkerPool

        def nothing():
            return {}

        def pid(_):
            time.sleep(0.2)
            return os.getpid()

        if __name__ == "__main__":
            with WorkerPool(2, nothing) as pool:
                print(*sorted(set(pool.map(pid, range(6)))), flush=True)
                time.sleep(600)
    """))
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    pids = [int(p) for p in parent.stdout.readline().split()]
    try:
        assert pids
        parent.kill()
        parent.wait()
        deadline = time.monotonic() + 30
        while any(map(_running, pids)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(map(_running, pids))
    finally:
        for pid in filter(_running, pids):
            os.kill(pid, signal.SIGKILL)
        parent.kill()
