"""One pool of worker processes for every place that plays games in parallel (the expert
trainer's collection, the evaluation's deal sets), on this machine or on a Ray cluster.

:class:`WorkerPool` runs an initializer once per worker (it returns the state the tasks read with
:func:`worker_state`: the agents, an env, the settings) and then the tasks. One worker runs
everything in this process; more are spawned (numba and torch threads do not survive a fork),
each with ``threads`` threads for torch and numba (default 1: the workers share the machine's
cores, and each worker's own thread pools would otherwise compete for them) and Ctrl-C left to
the parent. This module imports neither torch nor numba: a worker sets the thread counts of those
its initializer loaded.

With ``address`` (``HOST:PORT`` of a Ray head, as ``chickenfoot eval --address`` and ``chickenfoot
expert --address`` pass it) the workers are Ray actors spread over the cluster's CPUs instead
(``workers`` of them, or one per CPU of the cluster): each runs the initializer once, then the
tasks; the results are the same as locally, in the same order. Every node needs this package and
whatever the tasks read (checkpoints given by path must be readable there too). A token-authenticated
cluster needs ``RAY_AUTH_MODE=token`` and its token (``RAY_AUTH_TOKEN`` or ``RAY_AUTH_TOKEN_PATH``) in
this process's environment, as docs/frameworks.md describes.
"""

from __future__ import annotations

import multiprocessing
import signal
import sys
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any

from cf_env import ChickenFootError

__all__ = ["ClusterConnectError", "WorkerPool", "join_cluster", "worker_state"]


class ClusterConnectError(ChickenFootError, ConnectionError):
    """``--address`` names no Ray cluster this process can join."""

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


def check_reachable(address: str, timeout: float = 5.0) -> None:
    """Fail fast on a ``host:port`` nobody listens on (``ray.init`` would retry for minutes)."""
    import socket

    host, sep, port = address.rpartition(":")
    if not sep or "://" in address or not port.isdigit():
        return  # "auto", "ray://..." and other forms Ray resolves itself
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as exc:
        raise ClusterConnectError(f"could not join the Ray cluster at {address}: nothing answers there ({exc}). "
                                  "Start the head first (`ray start --head --port PORT`) and pass its address.") from None


def join_cluster(address: str) -> bool:
    """Connect this process to the Ray cluster at ``address``; ``True`` if this call connected it
    (``False``: it already was). Raises :class:`ClusterConnectError` within seconds when nothing
    answers there."""
    import ray

    if ray.is_initialized():
        return False
    check_reachable(address)
    try:
        ray.init(address=address, log_to_driver=False)
    except ConnectionError as exc:
        raise ClusterConnectError(
            f"could not join the Ray cluster at {address}: {exc}\nIs the head running (`ray status`)? "
            "If it uses token authentication, export RAY_AUTH_MODE=token and the cluster's token "
            "(RAY_AUTH_TOKEN, or RAY_AUTH_TOKEN_PATH to its file) here too.") from None
    return True


class _RayWorker:
    """A pool worker as a Ray actor: the initializer's state, then any task on it."""

    def __init__(self, initializer: Callable[..., dict[str, Any]], initargs: tuple, threads: int) -> None:
        _limit_threads(threads)
        self.state = initializer(*initargs)
        _limit_threads(threads)

    def run(self, fn: Callable[..., Any], args: tuple) -> Any:
        return _in_process(self.state, fn, *args)


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

    def __init__(self, workers: int | None, initializer: Callable[..., dict[str, Any]], initargs: tuple = (),
                 threads: int = 1, address: str | None = None) -> None:
        self.workers = workers
        self._executor: ProcessPoolExecutor | None = None
        self._actors: list[Any] = []
        self._joined = False
        self._next = 0
        self._state: dict[str, Any] = {}
        if address:
            import ray

            self._joined = join_cluster(address)
            count = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
            remote = ray.remote(num_cpus=1)(_RayWorker)
            self._actors = [remote.remote(initializer, initargs, threads) for _ in range(count)]
            self.workers = count
        elif workers is None or workers == 1:
            self.workers = 1
            self._state = initializer(*initargs)
        else:
            context = multiprocessing.get_context("spawn")
            self._executor = ProcessPoolExecutor(workers, mp_context=context, initializer=_init,
                                                 initargs=(initializer, initargs, threads))

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future:
        """``fn(*args)`` in a worker (at once, in this process, for one worker)."""
        if self._actors:
            actor = self._actors[self._next % len(self._actors)]
            self._next += 1
            return actor.run.remote(fn, args).future()
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
        if self._actors:
            from ray.util import ActorPool

            return ActorPool(self._actors).map(lambda actor, args: actor.run.remote(fn, args), list(zip(*iterables)))
        if self._executor is not None:
            return self._executor.map(fn, *iterables)
        return (_in_process(self._state, fn, *args) for args in zip(*iterables))

    def close(self) -> None:
        if self._actors:
            import ray

            for actor in self._actors:
                ray.kill(actor)
            self._actors = []
            if self._joined:
                ray.shutdown()
                self._joined = False
        if self._executor is not None:
            self._executor.shutdown()
            self._executor = None
        self._state = {}

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
