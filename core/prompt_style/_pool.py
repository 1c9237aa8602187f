"""An ordered map over chunks of work in spawned worker processes.

The one process pool of the project (``render --jobs``, ``instantiate --jobs``):
each worker receives the shared state once (pickled, through the pool's
initializer) and then maps chunks with a module-level function; results come
back in the order of the chunks, so the output is the serial output whatever
the number of workers. Workers are spawned, never forked: a fork copies the
locks of the sandbox's deadline thread mid-use, and a spawned worker behaves
the same on every platform.
"""

from __future__ import annotations

import gc
import multiprocessing
import pickle
from collections.abc import Callable, Iterable, Iterator
from typing import Any

__all__ = ["ordered_map", "check_jobs"]

_state: list[Any] = []


def _start(payload: bytes) -> None:
    # The state arrives pickled and is unpickled here, so that a failure is kept and
    # raised with the first chunk: a pool whose initializer fails restarts its
    # workers forever instead of reporting it.
    try:
        _state[:] = [pickle.loads(payload), None]
    except BaseException as exc:  # noqa: BLE001 - reported to the parent with the first chunk
        _state[:] = [None, exc]
    # What the worker holds from now on (its modules, the task it was sent) lives to the
    # end: out of the collector's sight, so that its collections walk only what each
    # chunk makes, as the command's own process does once its task is loaded.
    gc.freeze()


def _call(chunk: Any) -> Any:
    state, failed = _state
    if failed is not None:
        from .errors import RenderError

        raise RenderError(
            f"a worker process could not load the task: {type(failed).__name__}: {failed}",
            hint="functions and plugins must be importable by name in a new process; or render with --jobs 1",
        )
    work, shared = state
    return work(shared, chunk)


def check_jobs(jobs: int) -> int:
    """``jobs`` when it is a usable number of workers (``OptionError`` otherwise)."""
    if not isinstance(jobs, int) or isinstance(jobs, bool) or jobs < 1:
        from .errors import OptionError

        raise OptionError(f"the number of jobs must be a whole number, 1 or more, not {jobs!r}", key="jobs")
    return jobs


def ordered_map(work: Callable[[Any, Any], Any], state: Any, chunks: Iterable[Any], *, jobs: int) -> Iterator[Any]:
    """``work(state, chunk)`` for every chunk, computed by ``jobs`` spawned workers,
    yielded in the order of ``chunks``. ``work`` must be a module-level function and
    ``state`` picklable; an exception raised by ``work`` is raised here, after the
    results of the chunks before it."""
    check_jobs(jobs)
    try:
        payload = pickle.dumps((work, state), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception as exc:
        from .errors import RenderError

        raise RenderError(
            f"the task cannot be sent to worker processes ({type(exc).__name__}: {exc})",
            hint="render with --jobs 1, or make the task's callables module-level functions",
        ) from None
    context = multiprocessing.get_context("spawn")
    with context.Pool(jobs, initializer=_start, initargs=(payload,)) as pool:
        # imap keeps the order and reads chunks ahead as workers free up
        yield from pool.imap(_call, chunks)
