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

A worker that dies (a process killed, out of memory, a Ray node lost) loses no work:
:meth:`WorkerPool.imap` hands the tasks it held to the others (a local pool starts its processes
again; a Ray actor is dropped and its tasks go to the living ones) and the results are the ones
one process gives, in the same order. A task that kills every worker it is given
(``max_tries`` times) or a cluster with no worker left raises :class:`WorkerLostError`, after the
results already returned were handed out. The other way round, a spawned worker whose parent
dies without closing the pool (a SIGTERM or SIGKILL, which run no cleanup) ends too.
"""

from __future__ import annotations

import atexit
import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import threading
import warnings
from collections.abc import Callable, Hashable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from typing import Any

from cf_env import ChickenFootError

__all__ = ["ClusterConnectError", "WorkerLostError", "WorkerPool", "close_shared_pools", "join_cluster", "shared_pool",
           "worker_state"]


class ClusterConnectError(ChickenFootError, ConnectionError):
    """``--address`` names no Ray cluster this process can join."""


class WorkerLostError(ChickenFootError, RuntimeError):
    """The pool has no worker left to run a task on (every Ray actor died, or one task killed
    every worker it was given)."""

# the state of the pool whose task runs now: one entry in a spawned worker; in this process, the
# in-process pools' states while their tasks run (a trainer's pool may call an evaluation's)
_ACTIVE: list[dict[str, Any]] = []


def worker_state() -> dict[str, Any]:
    """What the pool's initializer built for the task that runs now (the agents, the env, the
    settings)."""
    if not _ACTIVE:
        raise RuntimeError("worker_state() is for tasks run by a WorkerPool")
    return _ACTIVE[-1]


_THREADS: list[int] = []  # in a spawned worker or Ray actor: its thread count for torch and numba
_LIMITED: set[str] = set()  # ... and the libraries already held to it


def _limit_threads(threads: int) -> None:
    """At most ``threads`` threads for torch's and numba's parallel work, where they are loaded."""
    _THREADS[:] = [threads]
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(threads)
        _LIMITED.add("torch")
    if "numba" in sys.modules:
        numba = sys.modules["numba"]
        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
        _LIMITED.add("numba")


def _settle_threads() -> None:
    """Hold a library a task loaded after the worker started to the worker's threads (an
    evaluation's worker loads its agents, and with them torch, on its first task: two workers of
    torch's default two threads each on two cores played a network's games 8x slower than one
    process)."""
    if _THREADS and any(name in sys.modules and name not in _LIMITED for name in ("torch", "numba")):
        _limit_threads(_THREADS[0])


def _init(initializer: Callable[..., dict[str, Any]], initargs: tuple, threads: int) -> None:
    """A spawned worker's start: Ctrl-C is the parent's to handle (it stops between tasks), and
    the worker leaves when its parent dies without closing the pool (a SIGTERM or SIGKILL): the
    task queue's pipe stays open in every worker, so without it the workers wait on it forever."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = multiprocessing.parent_process()
    if parent is not None:
        threading.Thread(target=_leave_with, args=(parent.sentinel,), name="parent-watch", daemon=True).start()
    # torch (and OpenMP) read these when first imported, which is often in the first task (an
    # evaluation's agents load there): without them that task ran on torch's default threads,
    # two workers on two cores oversubscribed, until _settle_threads held torch after it
    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[name] = str(threads)
    _limit_threads(threads)
    _ACTIVE[:] = [initializer(*initargs)]
    _limit_threads(threads)  # the libraries the initializer loaded too


def _leave_with(sentinel: int) -> None:
    """Wait for the parent process to end (its sentinel turns ready), then end this one."""
    multiprocessing.connection.wait([sentinel])
    os._exit(1)


def _run_task(fn: Callable[..., Any], *args: Any) -> Any:
    """A task in a spawned worker: ``fn(*args)``, then the thread limit for what it loaded."""
    try:
        return fn(*args)
    finally:
        _settle_threads()


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
        try:
            return _in_process(self.state, fn, *args)
        finally:
            _settle_threads()


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
        self._init = (initializer, initargs, threads)
        self.lost = 0  #: workers that died while this pool ran (their tasks ran again elsewhere)
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
            self._executor = self._new_executor()

    def _new_executor(self) -> ProcessPoolExecutor:
        context = multiprocessing.get_context("spawn")
        return ProcessPoolExecutor(self.workers, mp_context=context, initializer=_init, initargs=self._init)

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future:
        """``fn(*args)`` in a worker (at once, in this process, for one worker)."""
        if self._actors:
            actor = self._actors[self._next % len(self._actors)]
            self._next += 1
            return actor.run.remote(fn, args).future()
        if self._executor is not None:
            return self._executor.submit(_run_task, fn, *args)
        future: Future = Future()
        try:
            future.set_result(_in_process(self._state, fn, *args))
        except Exception as exc:  # handed to the caller as a spawned worker's would be
            future.set_exception(exc)
        return future

    def map(self, fn: Callable[..., Any], *iterables: Iterable[Any]) -> Iterator[Any]:
        """``fn`` over the iterables' items, results in order (:meth:`imap`)."""
        return self.imap(fn, zip(*iterables))

    def imap(self, fn: Callable[..., Any], tasks: Iterable[tuple], window: int | None = None,
             max_tries: int = 3) -> Iterator[Any]:
        """``fn(*args)`` for each ``args`` of ``tasks``, results in order. ``tasks`` is read lazily:
        at most ``window`` (default: twice the workers) run or wait at a time, so a caller that
        stops reading (a sequential test's verdict, a time limit) leaves little work behind.
        Tasks on a worker that dies run again on the others (see the module docstring); a task
        whose worker died ``max_tries`` times raises :class:`WorkerLostError`."""
        if self._executor is None and not self._actors:
            yield from (_in_process(self._state, fn, *args) for args in tasks)
            return
        window = window or 2 * (self.workers or 1)
        source = iter(tasks)
        args_of: dict[int, tuple] = {}  # tasks not yet returned, by index
        running: dict[int, tuple[Future, Any]] = {}  # index -> (future, the actor it runs on or None)
        finished: dict[int, Any] = {}
        tries: dict[int, int] = {}
        try:
            yield from self._results(fn, source, window, max_tries, args_of, running, finished, tries)
        finally:  # the caller stopped reading (a verdict, an error): what has not started is dropped
            for future, _ in running.values():
                future.cancel()

    def _results(self, fn: Callable[..., Any], source: Iterator[Any], window: int, max_tries: int,
                 args_of: dict[int, tuple], running: dict[int, tuple[Future, Any]], finished: dict[int, Any],
                 tries: dict[int, int]) -> Iterator[Any]:
        """:meth:`imap`'s loop (``running`` is the caller's, so that it can cancel what is left)."""
        taken = given = 0
        exhausted = False
        while True:
            while not exhausted and len(args_of) < window:
                try:
                    args_of[taken] = tuple(next(source))
                except StopIteration:
                    exhausted = True
                    break
                running[taken] = self._launch(fn, args_of[taken])
                taken += 1
            if given in finished:
                yield finished.pop(given)
                given += 1
                continue
            if not args_of:
                return
            wait([future for future, _ in running.values()], return_when=FIRST_COMPLETED)
            for i, (future, actor) in list(running.items()):
                if not future.done():
                    continue
                try:
                    finished[i] = future.result()
                except Exception as exc:
                    if not self._is_lost(exc):
                        raise
                    tries[i] = tries.get(i, 0) + 1
                    if tries[i] >= max_tries:
                        raise WorkerLostError(f"task {i} lost its worker {tries[i]} times ({type(exc).__name__}: "
                                              f"{exc}); it may be what kills them") from exc
                    if self._executor is not None:
                        self._restart(exc)  # every task of a broken local pool is lost: start them all again
                        again = {j: self._launch(fn, args_of[j]) for j in running if j not in finished}
                        running.clear()
                        running.update(again)
                        break
                    self._drop(actor, exc)
                    running[i] = self._launch(fn, args_of[i])
                    continue
                del running[i], args_of[i]

    def _launch(self, fn: Callable[..., Any], args: tuple) -> tuple[Future, Any]:
        if self._actors:
            actor = self._actors[self._next % len(self._actors)]
            self._next += 1
            return actor.run.remote(fn, args).future(), actor
        assert self._executor is not None
        return self._executor.submit(_run_task, fn, *args), None

    def _is_lost(self, exc: BaseException) -> bool:
        """Whether ``exc`` says the worker died (not that the task failed)."""
        if isinstance(exc, BrokenProcessPool):
            return True
        if self._actors or "ray" in sys.modules:
            from ray.exceptions import RayActorError

            return isinstance(exc, RayActorError)
        return False

    def _restart(self, exc: BaseException) -> None:
        """A local worker died and took the pool with it: new processes, the same initializer."""
        assert self._executor is not None
        self.lost += 1
        warnings.warn(f"a worker process died ({exc}); starting the pool again and running its tasks there",
                      RuntimeWarning, stacklevel=3)
        self._executor.shutdown(wait=False, cancel_futures=True)
        self._executor = self._new_executor()

    def _drop(self, actor: Any, exc: BaseException) -> None:
        """A Ray actor died: its tasks go to the others; none left is a :class:`WorkerLostError`."""
        if actor in self._actors:
            self._actors.remove(actor)
            self.lost += 1
            warnings.warn(f"a Ray worker died ({type(exc).__name__}); {len(self._actors)} left run its tasks",
                          RuntimeWarning, stacklevel=3)
        if not self._actors:
            raise WorkerLostError("every worker of the Ray cluster was lost; the results already returned are kept "
                                  "(an evaluation or comparison saved to a file resumes from them)") from exc

    def close(self, at_once: bool = False) -> None:
        """Let the workers go: after their running tasks, or with ``at_once`` (a Ctrl-C, an
        error) at once, their tasks dropped."""
        if self._actors:
            import ray

            for actor in self._actors:
                ray.kill(actor)
            self._actors = []
            if self._joined:
                ray.shutdown()
                self._joined = False
        if self._executor is not None:
            if at_once:
                # the stdlib has no public way to stop running tasks before Python 3.14's terminate_workers()
                processes = list((getattr(self._executor, "_processes", None) or {}).values())
                self._executor.shutdown(wait=False, cancel_futures=True)
                for process in processes:
                    process.terminate()
            else:
                self._executor.shutdown()
            self._executor = None
        self._state = {}

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *exc: Any) -> None:
        self.close(at_once=exc_type is not None)


# One pool kept between uses (see shared_pool): its key and the pool.
_SHARED: dict[Hashable, WorkerPool] = {}


@contextmanager
def shared_pool(key: Hashable, workers: int | None, initializer: Callable[..., dict[str, Any]], initargs: tuple = (),
                threads: int = 1) -> Iterator[WorkerPool]:
    """A :class:`WorkerPool` of local processes that stays after the ``with`` block for the next
    use with the same ``key``, so that its workers start once (spawning one and loading what it imports takes about
    a second here): the evaluations of a ladder, a trainer's periodic checks, repeated calls from a
    notebook. One pool is kept at a time: another key closes it first. A pool whose use raised
    (Ctrl-C included) or that lost a worker is closed rather than kept; every kept pool closes when
    this process exits (or with :func:`close_shared_pools`). The initializer's state must not
    depend on what a use needs beyond ``key`` (a task that needs more builds it, as the evaluation
    loads its agents on each run's first task). Ray actors are not kept this way: they would hold
    the cluster's CPUs between uses."""
    pool = _SHARED.get(key)
    if pool is None:
        close_shared_pools()
        pool = WorkerPool(workers, initializer, initargs, threads)
        _SHARED[key] = pool
    kept = False
    try:
        yield pool
        kept = not pool.lost
    finally:
        if not kept:
            _SHARED.pop(key, None)
            pool.close(at_once=True)  # a use that raised (Ctrl-C included) leaves no task worth waiting for


def close_shared_pools() -> None:
    """Close the pool :func:`shared_pool` keeps, if any (its workers exit)."""
    while _SHARED:
        _, pool = _SHARED.popitem()
        pool.close()


atexit.register(close_shared_pools)
