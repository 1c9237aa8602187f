"""The render deadline, watched by a timer thread instead of read at every operation.

A render checks its deadline at every check point: every loop iteration, call,
macro call, filter and operator that can be slow. Reading the clock there cost
about 45 ns each time, more than the check itself. Instead, each render is
registered here while it runs, and a daemon thread wakes every :data:`PERIOD`
seconds, starts the deadline of each render it sees for the first time, and
marks the renders that are past their deadline as *due* (``budget.due =
True``). A check point is then one attribute test (``if budget.due:
budget.tick()``), and ``tick()`` reads the clock and raises
:class:`~prompt_style.LimitError` when the deadline has passed. No clock is
read in a render that ends in time.

The guarantee does not depend on the thread being on time, only on it running:

- a render's deadline starts when the thread first sees it, at most a period
  (:data:`PERIOD`, or a tenth of the shortest deadline running) plus Python's
  thread switch interval (5 ms) after it started, and the render is due at most
  as long after its deadline, then stops at its next check point: within about
  60 ms of its deadline (plus the time to the next check point);
- renders also read the clock on their slow paths (every ~1M characters
  built, every budget near its limit), as before;
- where no thread can be started (``RuntimeError``), every render is due from
  its start: the clock is read at every check point, as before.

The thread starts with the first render that has a deadline, exits after
:data:`IDLE` seconds without a render, and starts again when needed (a forked
child starts its own).
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any

__all__ = ["PERIOD", "IDLE", "UNSET", "RUNNING", "register", "release", "watching"]

PERIOD = 0.025
"""The most seconds between two looks at the running renders: a tenth of the shortest
deadline among them, if that is shorter (but not under :data:`MIN_PERIOD`). Each look
takes Python's GIL from the rendering threads, so the thread looks no more often than
the deadlines need (a deadline is about seconds)."""
MIN_PERIOD = 0.002
IDLE = 1.0
"""Seconds without a running render after which the thread exits."""

UNSET = float("inf")
"""``stop_at`` of a budget the thread has not seen yet (it sets it when it first does)."""

RUNNING: set[Any] = set()
"""The budgets of the renders in progress (any thread)."""

_lock = threading.Lock()
_kick = True  # register() must be called: the thread is not running (or cannot run: _failed)
_failed = False  # no thread could be started: every render is due from its start


def _watch() -> None:
    global _kick
    monotonic, sleep = time.monotonic, time.sleep
    idle_since = monotonic()
    period = PERIOD
    while True:
        sleep(period)
        now = monotonic()
        running = list(RUNNING)  # a copy: renders come and go meanwhile
        period = PERIOD
        if running:
            idle_since = now
            for budget in running:
                stop = budget.stop_at
                deadline = budget.limits.seconds
                if stop == UNSET:  # first seen: its deadline counts from now (at most a period late)
                    budget.stop_at = now + deadline
                elif now > stop:
                    budget.due = True
                if deadline < 10 * period:
                    period = max(deadline / 10, MIN_PERIOD)
        elif now - idle_since > IDLE:
            with _lock:
                # Announce the exit before the last look: a render that registers after
                # this look sees _kick and starts a new thread (see register()).
                _kick = True
                if not RUNNING:
                    return
                _kick = False
            idle_since = now


def _start() -> None:
    global _kick, _failed
    with _lock:
        if not _kick or _failed:
            return
        try:
            threading.Thread(target=_watch, name="prompt-style-deadline", daemon=True).start()
        except RuntimeError:  # no threads here (or the interpreter is shutting down)
            _failed = True  # and _kick stays set: every render comes to register()
            return
        _kick = False


def register(budget: Any) -> None:
    """Watch ``budget`` until :func:`release`: the thread sets its ``stop_at``
    (now plus ``budget.limits.seconds``) when it first sees it, then its ``due``
    once the time is past. Callers that add to :data:`RUNNING` themselves call
    this only while ``_kick`` is set (the thread must be started, or cannot be).
    Without a thread the deadline is set here and the budget is due from the
    start (the clock is read at every check point)."""
    RUNNING.add(budget)
    if _kick and not _failed:
        _start()
    if _failed:
        budget.stop_at = time.monotonic() + budget.limits.seconds
        budget.due = True


release = RUNNING.discard
"""Stop watching a budget (its render ended)."""


def watching() -> bool:
    """Whether renders are watched by the thread (else they read the clock at every check point)."""
    return not _failed


def _after_fork() -> None:
    # The thread does not survive a fork: the child starts its own when it renders.
    global _kick, _lock
    _lock = threading.Lock()
    RUNNING.clear()
    _kick = True


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)
