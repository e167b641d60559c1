"""Every agent of the fleet read in parallel: worker processes, as many as there are CPUs (reading memory is
CPU work, which threads would serialise), each agent bounded by a timeout so that a slow remote holds up only
its own row. The git fetch itself is killed at the same timeout; a worker that still does not answer is
reported as timed out, and the others carry on."""
from __future__ import annotations

import concurrent.futures as futures
import multiprocessing
import os
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from datetime import UTC, datetime

from gitmem.fleet.fleetfile import AgentEntry, Fleet
from gitmem.fleet.read import UNREADABLE, AgentReading, AgentRow, InboxItem, read_agent, unreadable_row
from gitmem.memory.display import masked_printable

DEFAULT_TIMEOUT = 120.0       # seconds per agent: a first shallow fetch of a big repository fits
STARTUP = 30.0                # seconds for the workers to start, on top of the agents' own timeouts
Clock = Callable[[], datetime]


@dataclass(frozen=True)
class FleetView:
    moment: datetime
    readings: tuple[AgentReading, ...]

    @property
    def rows(self) -> list[AgentRow]:
        return [r.row for r in self.readings]

    @property
    def inbox(self) -> list[InboxItem]:
        """Every pending decision of the fleet, oldest first (undated ones last), then by agent and id."""
        items = [d for r in self.readings for d in r.inbox]
        return sorted(items, key=lambda d: (d.age_days is None, -(d.age_days or 0), d.agent, d.workspace, d.id))

    @property
    def failed(self) -> bool:
        return any(r.row.verdict == UNREADABLE for r in self.readings)


def workers(count: int) -> int:
    return max(1, min(count, os.cpu_count() or 1))


def read_fleet(fleet: Fleet, *, clock: Clock | None = None, timeout: float = DEFAULT_TIMEOUT,
               with_page: bool = False, offline: bool = False) -> FleetView:
    """Every agent, in the order of fleet.yaml (each agent's workspaces in their config's order); `offline`
    reads the copies of URLs as the last fetch left them."""
    moment = (clock or (lambda: datetime.now(UTC)))()
    entries = fleet.agents
    # Always in worker processes, even for one agent: only a process can be stopped at the timeout, whatever an
    # agent's files make the reading do.
    results: dict[int, list[AgentReading]] = {}
    # spawn, not fork: the parent may hold threads and open repositories, which a forked child must not share.
    pool = futures.ProcessPoolExecutor(workers(len(entries)), mp_context=multiprocessing.get_context("spawn"))
    try:
        submitted = {pool.submit(read_agent, e, fleet.base, moment, timeout=timeout, with_page=with_page,
                                 offline=offline): n for n, e in enumerate(entries)}
        # A worker reads its agents one after the other, so the wait grows with the queue ahead of it.
        rounds = -(-len(entries) // workers(len(entries)))
        try:
            # Past each agent's own timeout, a margin for starting the workers (they import gitmem).
            for future in futures.as_completed(submitted, timeout=timeout * rounds + STARTUP):
                results[submitted[future]] = _result(future, entries[submitted[future]])
        except futures.TimeoutError:
            pass                  # the agents not read by now get a row that says so
    finally:
        _stop(pool)
    ordered = [results.get(n) or [_timed_out(e, timeout)] for n, e in enumerate(entries)]
    return FleetView(moment, tuple(r for rows in ordered for r in rows))


def _stop(pool: futures.ProcessPoolExecutor) -> None:
    """End the workers first, those still busy past the timeout included (otherwise the process would wait for
    them at exit, after printing its rows), then shut the pool down and wait for its manager thread. Left
    running, that thread raced the interpreter's exit: its wake-up pipe was closed under it, and a command that
    had done its work printed a traceback ("Bad file descriptor"). (`terminate_workers` arrives in 3.14.)"""
    for process in list(getattr(pool, "_processes", {}).values()):
        if process.is_alive():
            process.terminate()
    pool.shutdown(wait=True, cancel_futures=True)


def _result(future: futures.Future[list[AgentReading]], entry: AgentEntry) -> list[AgentReading]:
    try:
        return future.result()
    except BrokenProcessPool as err:   # a worker that died (killed, out of memory): that agent's error, not all
        message = masked_printable(f"reading failed: {type(err).__name__}: {err}")
        return [AgentReading(unreadable_row(entry, message))]


def _timed_out(entry: AgentEntry, timeout: float) -> AgentReading:
    return AgentReading(unreadable_row(entry, f"not read within {timeout:.0f}s"))
