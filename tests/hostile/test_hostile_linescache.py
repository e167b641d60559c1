"""Hostile inputs: `.git/gitmem/lines.json` is the agent's to write, so it must never change a verdict.

The agent runs as the same user, and `.git/gitmem/` is writable even inside the sandbox. The line cache once
held the fence state at an offset, bound only by a hash of the 4 KB before it, which anyone can recompute:
`check` judged an append from it, `log add` decided from it whether to close a fence, and the tail readers
decided from it which `## ` lines are entries (so the cycle a write gets). Each test plants a forged cache,
with the hash recomputed to match, and expects exactly what no cache gives: the fence state is counted from
the bytes (gitmem.workspace.head_and_tail), and the cache can move a line number only.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from gitmem.memory_writer import MemoryWriter
from gitmem.workspace import Workspace
from gitmem.workspace.head_and_tail import LINES_CACHE
from tests.support.helpers import HUMAN, CliResult, GitRepo
from tests.support.hostile import FixedClock

L = "LOG.md"
FAKE = "## 2099-01-01 00:00 UTC · cycle 999 · built"
FILLER = 400          # entries: the LOG outgrows the first tail block, so tail reads start mid-file


def entry(n: int, body: str = "") -> str:
    hour, minute = divmod(n, 60)
    return f"\n## 2026-11-{1 + hour // 24:02d} {hour % 24:02d}:{minute:02d} UTC · cycle {n} · built\n" \
           f"- Task: t{n}\n- Result: r{n}\n{body}"


def grown(body: str) -> str:
    """A LOG of FILLER entries whose last one ends with `body`."""
    return "# LOG\n" + "".join(entry(n) for n in range(1, FILLER)) + entry(FILLER, body)


# LOGs as history may hold them: one left open before fences were checked, and one whose last entry quotes a
# heading inside a closed fence (which a flipped fence state would count as cycle 999).
LEGACY_OPEN = grown("```\nlegacy code\n")
QUOTED = grown(f"```\n{FAKE}\n- Task: fake\n```\n")


def honest_fences(data: bytes, offset: int) -> int:
    return sum(line.startswith((b"```", b"~~~")) for line in data[:offset].split(b"\n"))


def mid_line(data: bytes, offset: int) -> int:
    return data.rfind(b"- Task: t", 0, offset) + 4


# Where a forged entry claims to be: LOG's end, a line start in the middle, the middle of a line in the last
# entries (no line start at all), and the start. Each claims the fence parity opposite to the truth.
OFFSETS: dict[str, Callable[[bytes], int]] = {
    "at-end": len,
    "mid-file": lambda data: data.rfind(b"\n## ", 0, len(data) // 2) + 1,
    "mid-entry": lambda data: mid_line(data, len(data) - 200),
    "start": lambda data: 0,
}


def forge(repo: GitRepo, where: str, *, lines: int = 0, text: str | None = None) -> None:
    """A lines.json entry for LOG (or `text`, HEAD's LOG) at OFFSETS[where] with the fence parity flipped and a
    probe that matches, as anyone who can read LOG can compute."""
    data = text.encode() if text is not None else (repo.path / L).read_bytes()
    offset = OFFSETS[where](data)
    probe = hashlib.sha1(data[max(0, offset - 4096):offset]).hexdigest()
    entry = {"offset": offset, "lines": lines, "fences": honest_fences(data, offset) + 1, "probe": probe}
    cache = repo.path / ".git" / "gitmem" / LINES_CACHE
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps({L: entry}), encoding="utf-8")


def no_cache(repo: GitRepo) -> None:
    (repo.path / ".git" / "gitmem" / LINES_CACHE).unlink(missing_ok=True)


def outcome(result: CliResult) -> tuple[int, str]:
    return result.code, result.out


# -- check ------------------------------------------------------------------------------------------------------

CHECKED = {
    # HEAD's LOG ends inside a fence: a hand-appended entry is code (GM301), whatever the cache claims.
    "open-then-entry": (LEGACY_OPEN, LEGACY_OPEN + entry(FILLER + 1)),
    # HEAD's LOG ends closed: a proper entry passes, whatever the cache claims.
    "closed-then-entry": (QUOTED, QUOTED + entry(FILLER + 1)),
    # HEAD's LOG ends closed: an entry that opens a fence and never closes it is GM921.
    "closed-then-unclosed": (QUOTED, QUOTED + entry(FILLER + 1, "```\ncode\n")),
    # HEAD's LOG ends open: closing the fence by hand, then appending, passes.
    "open-closed-by-hand": (LEGACY_OPEN, LEGACY_OPEN + "```\n" + entry(FILLER + 1)),
}


@pytest.mark.parametrize("where", OFFSETS)
@pytest.mark.parametrize("case", CHECKED)
def test_a_forged_line_cache_never_changes_checks_verdict(memrepo: GitRepo, cli, case: str, where: str) -> None:
    old, new = CHECKED[case]
    memrepo.commit_files({L: old}, "history as it was")
    memrepo.stage_files({L: new})
    truth = outcome(cli(["check"], cwd=memrepo.path))
    assert truth[0] == (0 if case in ("closed-then-entry", "open-closed-by-hand") else 1), truth
    forge(memrepo, where, text=old)
    assert outcome(cli(["check"], cwd=memrepo.path)) == truth
    # And with the tail readers' own (honest) cache in place, as after a cycle.
    no_cache(memrepo)
    Workspace.at(memrepo.path).log_tail(3)
    assert outcome(cli(["check"], cwd=memrepo.path)) == truth


# -- log add and the tail readers -------------------------------------------------------------------------------

def write_entry(repo: GitRepo) -> tuple[bytes, int | None]:
    memory = MemoryWriter(Workspace.at(repo.path), clock=FixedClock(datetime(2026, 12, 1, 9, 0, tzinfo=UTC)),
                          author_email=HUMAN[1])
    written = memory.add_log_entry(task="t", outcome="built", result="r")
    return (repo.path / L).read_bytes(), written.cycle


def readers(repo: GitRepo) -> tuple[object, ...]:
    ws = Workspace.at(repo.path)
    tail = ws.log_tail(3, numbered=False)
    return (ws.last_log_cycle(), ws.cycle_for("log", from_env=False), ws.cycle_for("memory", from_env=False),
            [(e.cycle, e.render()) for e in tail.entries])


@pytest.mark.parametrize("where", OFFSETS)
@pytest.mark.parametrize("log_text", [LEGACY_OPEN, QUOTED], ids=["legacy-open", "quoted-heading"])
def test_a_forged_line_cache_never_changes_what_log_add_writes(memrepo: GitRepo, log_text: str, where: str) -> None:
    memrepo.commit_files({L: log_text}, "history as it was")
    truth_readers = readers(memrepo)
    truth = write_entry(memrepo)
    assert truth[1] == FILLER + 1 and truth_readers[0] == FILLER
    memrepo.write(L, log_text)
    no_cache(memrepo)
    forge(memrepo, where)
    assert readers(memrepo) == truth_readers
    forge(memrepo, where)
    assert write_entry(memrepo) == truth


def test_a_forged_line_count_moves_no_entry_and_is_not_used_when_impossible(memrepo: GitRepo) -> None:
    memrepo.commit_files({L: QUOTED}, "history as it was")
    truth = Workspace.at(memrepo.path).log_tail(3)
    # More lines than bytes before the offset cannot be: the count is made again from the bytes.
    forge(memrepo, "mid-file", lines=10 ** 9)
    assert Workspace.at(memrepo.path).log_tail(3) == truth
