"""A memory repository with a long history, written fast: LOG entries and NOW blocks rendered as bytes and
committed in one commit (no hook runs, as `git commit --no-verify`), for the seal tests (rules 6)."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta

from gitmem.memory import log, now
from gitmem.memory.timestamps import Timestamp
from tests.support.helpers import GitRepo

FIRST = datetime(2026, 1, 1, 9, 0, tzinfo=UTC)   # a cycle an hour from here: 3,000 end on 2026-05-06


def cycle_time(number: int) -> Timestamp:
    return Timestamp.from_datetime(FIRST + timedelta(hours=number - 1))


def log_bytes(preamble: str, count: int) -> bytes:
    """`preamble` (the template's LOG.md) and cycles 1..count, one entry each, as the runner writes them."""
    entries = [log.make_entry(cycle_time(n), cycle=n, outcome="built",
                              fields={"Task": f"task {n}", "Result": f"result {n}"}).render() for n in
               range(1, count + 1)]
    return "".join([preamble.rstrip("\n") + "\n", *(f"\n{entry}\n" for entry in entries)]).encode("utf-8")


def now_bytes(preamble: str, count: int, *, last: int) -> bytes:
    """`preamble` (the template's NOW.md) and the blocks of cycles last-count+1..last, newest on top."""
    text = preamble
    for n in range(last - count + 1, last + 1):
        text = now.prepend_block(text, now.make_block(cycle_time(n), did=f"did {n}", human="nothing",
                                                      next=f"next {n}", cycle=n))
    return text.encode("utf-8")


def with_history(repo: GitRepo, *, entries: int, blocks: int) -> None:
    """Commit a LOG of `entries` cycle entries and a NOW of `blocks` blocks (the last cycles') on `repo`."""
    log_text, now_text = repo.read("LOG.md"), repo.read("NOW.md")
    repo.commit_files({"LOG.md": log_bytes(log_text, entries),
                       "NOW.md": now_bytes(now_text, min(blocks, entries), last=entries)},
                      f"history: {entries} cycles")


def entry_count(data: bytes) -> int:
    return len(log.parse(data.decode("utf-8")).entries)
