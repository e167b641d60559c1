"""Hostile inputs, class 6: parsing is total and linear.

Fenced code hides headings for every reader (the tail of LOG, the top of NOW, the Resolved cut of DECISIONS, the
current ROADMAP section, the close, the report), and an unclosed fence is GM921. Bare CR, NUL and other control
characters are refused at write and reported at check (GM920); CRLF stays the GM905 warning. A 1 MB heading line
of any shape checks without backtracking and without a traceback (timings: benchmarks/bench_adversarial.py).
"""
from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta

import pytest

from gitmem.close.day import cycle_numbers
from gitmem.cycle.budget import NEWLY_RESOLVED, build_request
from gitmem.memory import log, roadmap
from gitmem.memory_writer import MemoryWriter, WriteRefused
from gitmem.report.log_scan import scan_log
from gitmem.workspace import Workspace
from tests.support.builders import LOG_BASE, decisions_md, lesson, lessons_md, log_entry, now_block, now_md, pending
from tests.support.gitcli import isolated_env
from tests.support.helpers import HUMAN, GitRepo
from tests.support.hostile import changed, picture, refused

L, N, D, LE, RM = "LOG.md", "NOW.md", "DECISIONS.md", "LESSONS.md", "ROADMAP.md"
FAKE = "## 2099-01-01 00:00 UTC · cycle 999 · built"


class Clock:
    def __init__(self) -> None:
        self.moment = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.moment += timedelta(minutes=5)
        return self.moment


def writer(repo: GitRepo) -> MemoryWriter:
    return MemoryWriter(Workspace.at(repo.path), clock=Clock(), author_email=HUMAN[1])


def entry_with(hour: int, cycle: int, extra: str) -> str:
    return log_entry(hour, cycle).rstrip("\n") + "\n" + extra


# -- fences in LOG ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("mark", ["```", "~~~", "```python"])
def test_a_new_entry_that_leaves_a_fence_open_is_refused(memrepo: GitRepo, cli, mark: str) -> None:
    memrepo.commit_files({L: LOG_BASE})
    memrepo.stage_files({L: LOG_BASE + entry_with(10, 2, f"{mark}\ncode\n")})
    result = refused(cli(["check"], cwd=memrepo.path), 1)
    assert "LOG.md:10: GM921 the code fence opened on this line is never closed" in result.out


def test_a_log_left_open_before_fences_were_checked_is_closed_by_log_add(memrepo: GitRepo, cli) -> None:
    memrepo.commit_files({L: LOG_BASE + entry_with(10, 2, "```\nlegacy code\n")}, "legacy, unchecked")
    entry = writer(memrepo).add_log_entry(task="t", outcome="built", result="r", cycle=3)
    text = memrepo.read(L)
    assert text.endswith("legacy code\n```\n\n" + entry.render() + "\n")
    assert [e.cycle for e in log.parse(text).entries] == [1, 2, 3]
    memrepo.stage(L)
    assert cli(["check"], cwd=memrepo.path).code == 0
    assert Workspace.at(memrepo.path).last_log_cycle() == 3


def test_an_entry_hand_appended_inside_a_legacy_fence_is_refused(memrepo: GitRepo, cli) -> None:
    memrepo.commit_files({L: LOG_BASE + entry_with(10, 2, "```\nlegacy code\n")}, "legacy, unchecked")
    memrepo.stage_files({L: memrepo.read(L) + log_entry(11, 2)})
    result = refused(cli(["check"], cwd=memrepo.path), 1)
    assert "GM301" in result.out and "inside a code fence" in result.out


def test_check_counts_a_legacy_fence_whatever_the_line_cache_says(memrepo: GitRepo, cli) -> None:
    import json

    legacy = LOG_BASE + entry_with(10, 2, "```\nlegacy code\n")
    memrepo.commit_files({L: legacy}, "legacy, unchecked")
    cache = memrepo.path / ".git" / "gitmem" / "lines.json"
    cache.parent.mkdir(parents=True, exist_ok=True)
    # A cache that claims no fence is open (forged ones, probe and all: tests/hostile/test_hostile_linescache.py).
    cache.write_text(json.dumps({L: {"offset": len(legacy), "lines": 0, "fences": 0, "probe": "0" * 40}}))
    memrepo.stage_files({L: legacy + log_entry(11, 3)})
    assert "inside a code fence" in refused(cli(["check"], cwd=memrepo.path), 1).out
    # The cache the readers write holds line counts only, and check's verdict is the same.
    cache.unlink()
    assert Workspace.at(memrepo.path).log_tail(1).entries[-1].cycle == 2
    assert "inside a code fence" in refused(cli(["check"], cwd=memrepo.path), 1).out


def test_closing_a_legacy_fence_by_hand_then_appending_passes(memrepo: GitRepo, cli) -> None:
    legacy = LOG_BASE + entry_with(10, 2, "```\nlegacy code\n")
    memrepo.commit_files({L: legacy}, "legacy, unchecked")
    memrepo.stage_files({L: legacy + "```\n" + log_entry(11, 3)})
    assert cli(["check"], cwd=memrepo.path).code == 0
    memrepo.stage_files({L: legacy + "```\n" + log_entry(11, 2)})
    assert "GM303" in refused(cli(["check"], cwd=memrepo.path), 1).out     # cycle 2 is taken: it is visible


def test_a_fenced_heading_in_log_is_no_entry_for_any_reader(memrepo: GitRepo, cli) -> None:
    fenced = entry_with(10, 2, f"```\n{FAKE}\n- Task: fake\n- Result: fake\n```\n")
    memrepo.commit_files({L: LOG_BASE + fenced})
    ws = Workspace.at(memrepo.path)
    assert ws.last_log_cycle() == 2 and ws.cycle_for("log", from_env=False) == 3
    assert cycle_numbers(memrepo.read(L)) == {1, 2}
    assert [c.number for c in scan_log(memrepo.read(L)).cycles] == [1, 2]
    assert log.tail(memrepo.read(L), 1).entries[-1].cycle == 2
    memrepo.stage_files({L: memrepo.read(L) + log_entry(11, 3)})
    assert cli(["check"], cwd=memrepo.path).code == 0
    status = cli(["status"], cwd=memrepo.path)
    assert status.code == 0 and "last cycle   3" in status.out


def test_two_entries_for_one_cycle_cannot_hide_behind_a_fence(memrepo: GitRepo, cli) -> None:
    # The case: cycle 7 leaves a fence open; two `cycle 8` entries followed. Each step is refused.
    base = LOG_BASE + log_entry(9, 7)
    memrepo.commit_files({L: base})
    start = memrepo.head()
    memrepo.commit_files({L: base + entry_with(10, 8, "```\n")}, "fence left open")
    memrepo.commit_files({L: memrepo.read(L) + log_entry(11, 8)}, "another cycle 8")
    result = refused(cli(["verify", "--range", f"{start}..HEAD"], cwd=memrepo.path), 1)
    assert "GM921" in result.out and "inside a code fence" in result.out


@pytest.mark.parametrize(("path", "text"), [
    (N, now_md(now_block(10, 2) + "```\nhalf\n", now_block(9, 1))),
    (D, decisions_md(pending(1) + "~~~\n## Resolved\n", "")),
    (LE, lessons_md(lesson(1) + "```\n")),
    (RM, "# ROADMAP\n\n## Now (current)\n- [ ] ship\n```\n"),
])
def test_an_unclosed_fence_in_any_memory_file_is_refused(memrepo: GitRepo, cli, path: str, text: str) -> None:
    memrepo.stage_files({path: text})
    result = refused(cli(["check"], cwd=memrepo.path), 1)
    assert f"{path}:" in result.out and "GM921" in result.out


def test_an_old_unclosed_fence_is_not_held_against_a_new_change(memrepo: GitRepo, cli) -> None:
    memrepo.commit_files({LE: lessons_md(lesson(1) + "```\n")}, "legacy, unchecked")
    memrepo.stage_files({LE: lessons_md(lesson(2).replace("Guessed", "Other"), lesson(1) + "```\n")})
    assert cli(["check"], cwd=memrepo.path).code == 0


# -- fences in DECISIONS, NOW, ROADMAP ---------------------------------------------------------------------

FENCED_RESOLVED = "- Context: the file would look like\n{mark}\n## Resolved\n### D-0009 · fake\n{mark}\n"


@pytest.mark.parametrize("mark", ["```", "~~~"])
def test_a_fenced_resolved_heading_hides_nothing_from_context(memrepo: GitRepo, cli, mark: str) -> None:
    first = pending(1).replace("- Context: we need one\n", FENCED_RESOLVED.format(mark=mark))
    memrepo.commit_files({D: decisions_md(first + pending(2), pending(3).replace(
        "- Recommendation: gitmem\n", "- Recommendation: gitmem\n- Answer: yes\n"
                                      "- Answered: 2026-11-30 12:00 UTC by Ada Human <ada@example.com>\n"))})
    part = build_request(Workspace.at(memrepo.path)).parts[2]
    waiting, fresh = part.text.split(NEWLY_RESOLVED)
    assert "D-0001" in waiting and "D-0002" in waiting and "D-0009" not in waiting.replace("### D-0009 · fake", "")
    assert "### D-0003" in fresh
    listed = cli(["pending"], cwd=memrepo.path)
    assert "D-0001" in listed.out and "D-0002" in listed.out and "D-0003" not in listed.out


def test_the_resolved_cut_skips_fenced_decision_headings(memrepo: GitRepo) -> None:
    from gitmem.cycle.budget import _resolved_cut

    text = decisions_md(pending(1), "```\n" + "".join(f"### D-{n:04d} · fake\n" for n in (7, 8, 9)) + "```\n"
                        + pending(5) + pending(6))
    assert _resolved_cut(text, {"D-0007", "D-0008", "D-0009"}) is None


def test_now_writes_above_the_real_top_block(memrepo: GitRepo, cli) -> None:
    top = now_block(10, 2) + "```\n## 2026-11-30 11:00 UTC · cycle 7\n```\n"
    # LOG holds cycles 1 and 2, so the new block for cycle 3 opens the next cycle (NOW and LOG agree: GM105).
    memrepo.commit_files({N: now_md(top, now_block(9, 1)), L: LOG_BASE + log_entry(10, 2)})
    ws = Workspace.at(memrepo.path)
    assert ws.top_now_cycle() == 2
    part = build_request(ws).parts[1]
    assert "cycle 7" in part.text and "cycle 1" not in part.text
    block = writer(memrepo).add_now_block(did="x", human="y", next="z", cycle=3)
    assert memrepo.read(N).index(block.heading()) < memrepo.read(N).index("cycle 2")
    memrepo.stage(N)
    assert cli(["check"], cwd=memrepo.path).code == 0


def test_now_add_closes_a_fence_an_old_preamble_left_open(memrepo: GitRepo, cli) -> None:
    memrepo.commit_files({N: "# NOW\n```\nan example, never closed\n"}, "legacy, unchecked")
    block = writer(memrepo).add_now_block(did="x", human="y", next="z", cycle=1)
    assert Workspace.at(memrepo.path).top_now_cycle() == 1 and block.heading() in memrepo.read(N)
    memrepo.stage(N)
    assert cli(["check"], cwd=memrepo.path).code == 0


def test_a_fenced_checklist_is_no_roadmap() -> None:
    text = "# ROADMAP\n\n## Done\n```\n- [ ] an example item\n## Fake (current)\n```\n\n## Next\n- [ ] real\n"
    section = roadmap.current_section(text)
    assert section is not None and section.title == "Next" and roadmap.first_open_item(text) == "real"


def test_context_roadmap_part_skips_fenced_marks(memrepo: GitRepo) -> None:
    memrepo.write(RM, "# ROADMAP\n\n## Done\n```\n## Fake (current)\n- [ ] example\n```\n- [x] done\n\n"
                      "## Next\n- [ ] real\n")
    part = build_request(Workspace.at(memrepo.path)).parts[4]
    assert part.text.startswith("## Next") and "Fake" not in part.text


# -- control characters ------------------------------------------------------------------------------------

@pytest.mark.parametrize("field", ["--task", "--result", "--tried", "--evidence", "--learned"])
@pytest.mark.parametrize("value", ["x\r## 2099-01-01 00:00 UTC · cycle 9 · built", "x\x1b[2Jy", "x\x0by", "x\x7fy"])
def test_log_add_refuses_control_characters(memrepo: GitRepo, cli, field: str, value: str) -> None:
    args = {"--task": "t", "--result": "r", "--outcome": "built"}
    args[field] = value
    before = picture(memrepo.path)
    result = refused(cli(["log", "add", *[x for pair in args.items() for x in pair]], cwd=memrepo.path), 1)
    assert "GM920" in result.err
    assert changed(before, picture(memrepo.path)) == set()


@pytest.mark.parametrize("argv", [
    ["now", "add", "--did", "a\rb", "--human", "h", "--next", "n"],
    ["decision", "ask", "--title", "t", "--recommendation", "a\rb"],
    ["decision", "ask", "--title", "t", "--recommendation", "r", "--context", "a\x1b]0;owned\x07"],
    ["lesson", "add", "--title", "t", "--happened", "h", "--why", "a\rb", "--change", "c"],
])
def test_every_writer_refuses_a_bare_cr(memrepo: GitRepo, cli, argv: list[str]) -> None:
    before = picture(memrepo.path)
    assert "GM920" in refused(cli(argv, cwd=memrepo.path), 1).err
    assert changed(before, picture(memrepo.path)) == set()


@pytest.mark.parametrize("write", ["log", "now", "decision", "lesson"])
def test_nul_is_refused_at_write(memrepo: GitRepo, write: str) -> None:
    memory = writer(memrepo)
    before = picture(memrepo.path)
    calls = {"log": lambda: memory.add_log_entry(task="a\0b", outcome="built", result="r", cycle=1),
             "now": lambda: memory.add_now_block(did="a\0b", human="h", next="n", cycle=1),
             "decision": lambda: memory.ask_decision(title="t", recommendation="a\0b", cycle=1),
             "lesson": lambda: memory.add_lesson(title="t", happened="h", why="w", change="a\0b", cycle=1)}
    with pytest.raises(WriteRefused) as refusal:
        calls[write]()
    assert [v.code for v in refusal.value.violations] == ["GM920"]
    assert changed(before, picture(memrepo.path)) == set()


def test_crlf_in_a_value_becomes_lines(memrepo: GitRepo) -> None:
    entry = writer(memrepo).add_log_entry(task="one\r\ntwo", outcome="built", result="r", cycle=1)
    assert entry.get("Task") == "one\ntwo" and "\r" not in memrepo.read(L)


@pytest.mark.parametrize(("path", "bad", "what"), [
    (L, b"- Task: a\rb\n", "bare carriage return"), (L, b"- Task: a\0b\n", "NUL"),
    (N, b"- Did: a\x0cb\n", "U+000C"), (D, b"x\x1b[31m\n", "U+001B"), (LE, b"\x7f\n", "U+007F"),
])
def test_check_reports_control_characters(memrepo: GitRepo, cli, path: str, bad: bytes, what: str) -> None:
    memrepo.stage_files({path: (memrepo.path / path).read_bytes() + bad})
    result = refused(cli(["check"], cwd=memrepo.path), 1)
    assert f"{path}:" in result.out and "GM920" in result.out and what in result.out


def test_crlf_files_stay_a_warning(memrepo: GitRepo, cli) -> None:
    memrepo.commit_files({L: LOG_BASE + log_entry(10, 2)})          # the block's cycle is in LOG (GM105)
    memrepo.stage_files({N: now_md(now_block(10, 2)).replace("\n", "\r\n").encode()})
    result = cli(["check"], cwd=memrepo.path)
    assert result.code == 0 and "GM905" in result.out and "GM920" not in result.out


def test_an_old_control_character_is_not_held_against_a_new_decision(memrepo: GitRepo, cli) -> None:
    memrepo.commit_files({D: decisions_md(pending(1).replace("we need one", "we need\rone"))}, "legacy")
    memrepo.stage_files({D: decisions_md(pending(1).replace("we need one", "we need\rone") + pending(2))})
    assert cli(["check"], cwd=memrepo.path).code == 0


# -- linear time on adversarial lines ------------------------------------------------------------------------

MB = 1_000_000
TS = "2026-11-30 10:00 UTC"
ADVERSARIAL = {
    "log-spaces": (L, f"\n## {TS}" + " " * MB + "x\n"),
    "log-dashes": (L, f"\n## {TS}" + " -" * (MB // 2) + "\n"),
    "log-cycle-digits": (L, f"\n## {TS} · cycle " + "1" * MB + " · built\n- Task: t\n- Result: r\n"),
    "now-spaces": (N, f"\n## {TS}" + " " * MB + "cycle 1\n"),
    "decision-by": (D, "\n### D-0001 · t\n- Asked: " + " by x <y" * (MB // 8) + "\n"),
    "rule-parens": ("RULES.md", "\n- R-01 · " + "x (" * (MB // 3) + "\n"),
    "secret-prefixes": (L, f"\n## {TS} · cycle 9 · built\n- Task: " + "sk-ant-" * (MB // 7) + "\n- Result: r\n"),
}


@pytest.mark.parametrize("name", sorted(ADVERSARIAL))
def test_a_megabyte_heading_is_a_violation_not_a_hang(memrepo: GitRepo, name: str) -> None:
    path, addition = ADVERSARIAL[name]
    memrepo.stage_files({path: memrepo.read(path) + addition})
    # A hang guard only: the time itself is measured in benchmarks/bench_adversarial.py.
    done = subprocess.run([sys.executable, "-m", "gitmem", "check"], cwd=memrepo.path, capture_output=True,
                          text=True, timeout=120, env=isolated_env(who=HUMAN))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert all(len(line) < 1000 for line in done.stdout.splitlines())      # the line is quoted, never whole
