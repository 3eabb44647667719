"""One pool of worker processes for every place that plays games in parallel (the expert
trainer's collection, the evaluation's deal sets).

:class:`WorkerPool` runs an initializer once per worker (it returns the state the tasks read with
:func:`worker_state`: the agents, an env, the settings) and then the tasks. One worker runs
everything in this process; more are spawned (numba and torch threads do not survive a fork),
each with ``threads`` threads for torch and numba (default 1: the workers share the machine's
cores, and each worker's own thread pools would otherwise compete for them) and Ctrl-C left to
the parent. This module imports neither torch nor numba: a worker sets the thread counts of those
its initializer loaded.
"""

from __future__ import annotations

import multiprocessing
import signal
import sys
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any

__all__ = ["WorkerPool", "worker_state"]

# the state of the pool whose task runs now: one entry in a spawned worker; in this process, the
# in-process pools' states while their tasks run (a trainer's pool may call an evaluation's)
_ACTIVE: list[dict[str, Any]] = []


def worker_state() -> dict[str, Any]:
    """What the pool's initializer built for the task that runs now (the agents, the env, the
    settings)."""
    if not _ACTIVE:
        raise RuntimeError("worker_state() is for tasks run by a WorkerPool")
    return _ACTIVE[-1]


def _limit_threads(threads: int) -> None:
    """At most ``threads`` threads for torch's and numba's parallel work, where they are loaded."""
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(threads)
    if "numba" in sys.modules:
        numba = sys.modules["numba"]
        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))


def _init(initializer: Callable[..., dict[str, Any]], initargs: tuple, threads: int) -> None:
    """A spawned worker's start: Ctrl-C is the parent's to handle (it stops between tasks)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _limit_threads(threads)
    _ACTIVE[:] = [initializer(*initargs)]
    _limit_threads(threads)  # the libraries the initializer loaded too


def _in_process(state: dict[str, Any], fn: Callable[..., Any], *args: Any) -> Any:
    _ACTIVE.append(state)
    try:
        return fn(*args)
    finally:
        _ACTIVE.pop()


class WorkerPool:
    """``workers`` processes that each run ``initializer(*initargs)`` once and then the tasks given
    to :meth:`map` or :meth:`submit` (see the module docstring). Spawned workers need the calling
    script's entry point guarded by ``if __name__ == "__main__":``. Use as a context manager."""

    def __init__(self, workers: int, initializer: Callable[..., dict[str, Any]], initargs: tuple = (),
                 threads: int = 1) -> None:
        self.workers = workers
        self._executor: ProcessPoolExecutor | None = None
        self._state: dict[str, Any] = {}
        if workers == 1:
            self._state = initializer(*initargs)
        else:
            context = multiprocessing.get_context("spawn")
            self._executor = ProcessPoolExecutor(workers, mp_context=context, initializer=_init,
                                                 initargs=(initializer, initargs, threads))

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future:
        """``fn(*args)`` in a worker (at once, in this process, for one worker)."""
        if self._executor is not None:
            return self._executor.submit(fn, *args)
        future: Future = Future()
        try:
            future.set_result(_in_process(self._state, fn, *args))
        except Exception as exc:  # handed to the caller as a spawned worker's would be
            future.set_exception(exc)
        return future

    def map(self, fn: Callable[..., Any], *iterables: Iterable[Any]) -> Iterator[Any]:
        """``fn`` over the iterables' items, results in order (lazily in this process)."""
        if self._executor is not None:
            return self._executor.map(fn, *iterables)
        return (_in_process(self._state, fn, *args) for args in zip(*iterables))

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown()
            self._executor = None
        self._state = {}

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
