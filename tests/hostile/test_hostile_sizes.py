"""Hostile cases, class 8: sizes. Valid memory never blocks the next cycle, and the runner never commits a file
too big to push, nor leaves in the tree what no commit can hold (a repository the agent made inside it).

The property: any memory that passes `gitmem check` builds a context under the hard limit, whatever the
budget, however long its LOG entries, NOW lines, RULES lines, ROADMAP sections and always_load files, however
many Pending and freshly answered decisions it holds. Each limit has its own GM code, and judges new bytes only.
"""
from __future__ import annotations

import os
import tempfile
from dataclasses import replace
from pathlib import Path

import pygit2
import pytest
from hypothesis import HealthCheck, event, given, settings, target
from hypothesis import strategies as st

from gitmem import gitio
from gitmem.checks import CheckInput, run_checks
from gitmem.checks.sizes import size_limits
from gitmem.config import Config, Cycle, Limits
from gitmem.confined import files
from gitmem.cycle.budget import BudgetError, build_request, limits
from gitmem.cycle.oversize import INERT_GIT
from gitmem.workspace import Workspace
from tests.support.helpers import GitRepo

PROPERTY = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TS = "2026-11-30 {:02d}:{:02d} UTC"
# Multi-byte and wide characters: the budget counts characters, git and the file system bytes.
_CHARS = st.sampled_from(list("abcdefghij klmnop éü中文🙂—·"))


def _words(draw: st.DrawFn, size: int) -> str:
    unit = draw(st.text(_CHARS, min_size=1, max_size=12))
    return (unit * (size // len(unit) + 1))[:size].strip() or "x"


def _sized(draw: st.DrawFn, limit: int) -> int:
    """A size anywhere from small to a little over `limit`, often right at the edge."""
    return draw(st.one_of(st.integers(1, max(1, limit // 3)), st.integers(max(1, limit - 60), limit + 60)))


@st.composite
def memories(draw: st.DrawFn) -> tuple[Config, dict[str, str], str]:
    budget = draw(st.sampled_from([8000, 12000, 30000, 60000]))
    config = Config(limits=Limits(pending_max=draw(st.integers(1, 30))),
                    cycle=Cycle(max_context_tokens=budget, log_entries=draw(st.integers(1, 6)),
                                always_load=tuple(f"docs/load{n}.md" for n in range(draw(st.integers(0, 3))))))
    top = size_limits(config)
    rules_lines = draw(st.integers(1, 12))
    per_rule = max(1, _sized(draw, top.rules) // rules_lines - 20)
    rules = "# RULES\n\nWho I am.\n\n## Proven rules\n" + "".join(
        f"- R-{n:02d} · {_words(draw, per_rule)} (human)\n" for n in range(1, rules_lines + 1))
    now_size = max(1, (_sized(draw, top.now_block) - 60) // 3)
    now = (f"# NOW\n\n## {TS.format(9, 0)} · cycle 1\n- Did: {_words(draw, now_size)}\n"
           f"- Human: {_words(draw, now_size)}\n- Next: {_words(draw, now_size)}\n")
    count = draw(st.integers(0, config.limits.pending_max + 2))
    each = max(1, _sized(draw, top.pending) // max(count, 1) - 110)
    pending = "".join(f"\n### D-{n:04d} · Which way {n}?\n- Asked: {TS.format(9, 0)} (cycle 1)\n"
                      f"- Context: {_words(draw, each)}\n- Recommendation: this one\n" for n in range(1, count + 1))
    answered = draw(st.integers(0, 40))
    answer = _words(draw, draw(st.integers(1, top.resolved)))
    resolved = "".join(f"\n### D-{n:04d} · Answered {n}?\n- Asked: {TS.format(9, 0)} (cycle 1)\n"
                       f"- Recommendation: yes\n- Answer: {answer}\n- Answered: {TS.format(10, 0)} by Ada <a@b.c>\n"
                       for n in range(count + answered, count, -1))
    entries = draw(st.integers(1, 8))
    log = "# LOG\n" + "".join(
        f"\n## {TS.format(10 + n // 60, n % 60)} · cycle {n} · built\n- Task: task {n}\n"
        f"- Result: {_words(draw, max(1, _sized(draw, top.log_entry) - 70))}\n" for n in range(1, entries + 1))
    sections = draw(st.integers(1, 3))
    roadmap = "# ROADMAP\n" + "".join(
        f"\n## Part {n}{' (current)' if n == 1 else ''}\n"
        f"- [ ] {_words(draw, max(1, _sized(draw, top.roadmap_section) - 30))}\n"
        for n in range(1, sections + 1))
    memory = {"RULES.md": rules, "NOW.md": now,
              "DECISIONS.md": f"# DECISIONS\n\n## Pending\n{pending}\n## Resolved\n{resolved}",
              "LOG.md": log, "LESSONS.md": "# LESSONS\n", "ROADMAP.md": roadmap}
    loads = config.cycle.always_load
    for rel in loads:
        memory[rel] = "# Brief\n" + _words(draw, max(1, _sized(draw, top.always_load) // len(loads) - 10)) + "\n"
    return config, memory, draw(st.sampled_from(["anthropic", "command"]))


def _yaml(config: Config) -> str:
    loads = "".join(f"\n    - {rel}" for rel in config.cycle.always_load)
    return (f"limits:\n  pending_max: {config.limits.pending_max}\ncycle:\n  max_context_tokens: "
            f"{config.cycle.max_context_tokens}\n  log_entries: {config.cycle.log_entries}\n"
            f"  always_load:{loads or ' []'}\n")


@PROPERTY
@given(memories())
def test_memory_that_passes_check_always_builds_a_context_under_the_hard_limit(
        drawn: tuple[Config, dict[str, str], str]) -> None:
    config, memory, backend = drawn
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for rel, text in {**memory, "gitmem.yaml": _yaml(config)}.items():
            files.write_bytes(root, rel, text.encode("utf-8"))
        ws = Workspace.at(root)
        assert replace(ws.config, warnings=()) == config
        errors = [v for v in run_checks(CheckInput(ws.config, None, gitio.worktree_snapshot(root))) if v.is_error]
        event(f"check: {' '.join(sorted({v.code for v in errors})) or 'passed'}")
        if errors:
            assert {v.code for v in errors} <= {"GM104", "GM209", "GM307", "GM509", "GM601", "GM602"}, errors
            return
        try:
            request = build_request(ws, cycle=99, backend=backend)
        except BudgetError as err:      # the property is broken: say by how much
            raise AssertionError(f"valid memory was refused: {err}") from None
        hard = limits(config).hard
        assert request.total_tokens <= hard
        target(request.total_tokens / hard, label="share of the hard limit used by valid memory")


def _at_limit(config: Config) -> dict[str, str]:
    """Every part exactly at its limit: the largest memory `gitmem check` accepts."""
    top = size_limits(config)
    head = "# RULES\n\n## Proven rules\n- R-01 · "
    rules = head + "r" * (top.rules - len(head) - len(" (human)")) + " (human)\n"
    block = f"## {TS.format(9, 0)} · cycle 1\n- Did: "
    now = "# NOW\n\n" + block + "d" * (top.now_block - len(block)) + "\n"
    decision = f"### D-0001 · Which?\n- Asked: {TS.format(9, 0)} (cycle 1)\n- Recommendation: "
    pending = decision + "p" * (top.pending - 2 - len(decision)) + "\n"
    entry = f"## {TS.format(10, 0)} · cycle 1 · built\n- Task: t\n- Result: "
    log = "# LOG\n\n" + entry + "l" * (top.log_entry - len(entry)) + "\n"
    section = "## Now (current)\n- [ ] "
    roadmap = "# ROADMAP\n\n" + section + "m" * (top.roadmap_section - len(section)) + "\n"
    return {"RULES.md": rules, "NOW.md": now, "DECISIONS.md": f"# DECISIONS\n\n## Pending\n\n{pending}\n## Resolved\n",
            "LOG.md": log, "LESSONS.md": "# LESSONS\n", "ROADMAP.md": roadmap,
            "docs/brief.md": "b" * top.always_load + "\n"}


@pytest.mark.parametrize("budget", [8000, 60000, 200000])
def test_memory_at_every_limit_passes_check_and_fits(tmp_path: Path, budget: int) -> None:
    config = Config(cycle=Cycle(max_context_tokens=budget, always_load=("docs/brief.md",)))
    for rel, text in {**_at_limit(config), "gitmem.yaml": _yaml(config)}.items():
        files.write_bytes(tmp_path, rel, text.encode("utf-8"))
    found = run_checks(CheckInput(config, None, gitio.worktree_snapshot(tmp_path)))
    assert [v for v in found if v.is_error] == []
    request = build_request(Workspace.at(tmp_path), cycle=2, backend="command")
    assert request.total_tokens <= limits(config).hard and not request.warnings[1:]


@pytest.mark.parametrize("part, code", [("RULES.md", "GM509"), ("NOW.md", "GM104"), ("DECISIONS.md", "GM209"),
                                        ("LOG.md", "GM307"), ("ROADMAP.md", "GM601"), ("docs/brief.md", "GM602")])
def test_one_character_over_a_limit_is_its_own_code(tmp_path: Path, part: str, code: str) -> None:
    config = Config(cycle=Cycle(max_context_tokens=8000, always_load=("docs/brief.md",)))
    memory = _at_limit(config)
    filler = {"RULES.md": "r", "NOW.md": "d", "DECISIONS.md": "p", "LOG.md": "l", "ROADMAP.md": "m",
              "docs/brief.md": "b"}[part] * 20
    memory[part] = memory[part].replace(filler, filler + filler[0], 1)
    for rel, body in memory.items():
        files.write_bytes(tmp_path, rel, body.encode("utf-8"))
    found = [v for v in run_checks(CheckInput(config, None, gitio.worktree_snapshot(tmp_path))) if v.is_error]
    assert [(v.path, v.code) for v in found] == [(part, code)]


# -- through the CLI: writes are refused, commits are reported -----------------------------------------------------

BIG = "x" * (2 * 1024 * 1024)


@pytest.mark.parametrize("argv, code", [
    (["log", "add", "--task", "t", "--outcome", "built", "--result", "r", "--evidence", BIG], "GM307"),
    (["now", "add", "--did", BIG, "--human", "h", "--next", "n"], "GM104"),
    (["now", "add", "--did", "d", "--human", "h", "--next", "n" * 20000], "GM104"),
    (["decision", "ask", "--title", "Which?", "--recommendation", "r", "--context", BIG], "GM209"),
])
def test_a_write_too_big_for_the_next_context_is_refused(memrepo: GitRepo, cli, monkeypatch, argv: list[str],
                                                         code: str) -> None:
    monkeypatch.setenv("GITMEM_CYCLE", "1")
    before = {rel: memrepo.read(rel) for rel in ("LOG.md", "NOW.md", "DECISIONS.md")}
    result = cli(argv, cwd=memrepo.path)
    assert result.code == 1 and "Traceback" not in result.err
    assert f" {code} " in result.err and "characters" in result.err and BIG not in result.err
    assert {rel: memrepo.read(rel) for rel in before} == before
    assert cli(["context"], cwd=memrepo.path).code == 0


def test_the_pending_count_is_limited(memrepo: GitRepo, cli, monkeypatch) -> None:
    monkeypatch.setenv("GITMEM_CYCLE", "1")
    memrepo.commit_files({"gitmem.yaml": "limits:\n  pending_max: 3\n"})
    for n in range(3):
        assert cli(["decision", "ask", "--title", f"Q{n}?", "--recommendation", "r"], cwd=memrepo.path).code == 0
    result = cli(["decision", "ask", "--title", "Q4?", "--recommendation", "r"], cwd=memrepo.path)
    assert result.code == 1 and " GM209 4 Pending decisions; the limit is 3 (limits.pending_max)" in result.err


@pytest.mark.parametrize("rel, content, code", [
    ("LOG.md", None, "GM307"), ("NOW.md", None, "GM104"), ("RULES.md", None, "GM509"),
    ("ROADMAP.md", "# ROADMAP\n\n## Big (current)\n- [ ] " + BIG + "\n", "GM601"),
    ("docs/brief.md", "# Brief\n" + BIG + "\n", "GM602"),
])
def test_a_staged_change_too_big_for_the_next_context_fails_check(memrepo: GitRepo, cli, rel: str,
                                                                   content: str | None, code: str) -> None:
    memrepo.commit_files({"gitmem.yaml": "cycle:\n  always_load: [docs/brief.md]\n", "docs/brief.md": "# Brief\n"})
    if content is None:
        if rel == "LOG.md":
            content = memrepo.read(rel) + f"\n## {TS.format(9, 0)} · cycle 1 · built\n- Task: t\n- Result: {BIG}\n"
        elif rel == "NOW.md":
            content = memrepo.read(rel).replace("# NOW\n", f"# NOW\n\n## {TS.format(9, 0)} · cycle 1\n- Did: {BIG}\n",
                                                1)
        else:
            content = memrepo.read(rel).replace("## Proven rules\n", f"## Proven rules\n- R-01 · {BIG} (human)\n")
    memrepo.stage_files({rel: content})
    result = cli(["check"], cwd=memrepo.path)
    assert result.code == 1 and "Traceback" not in result.err
    assert [line.split(" ")[1] for line in result.lines if line.startswith(rel)] == [code]
    assert BIG not in result.out


def test_old_oversized_history_keeps_passing_and_never_blocks_a_cycle(memrepo: GitRepo, cli, monkeypatch) -> None:
    """Written before the limits (committed here without the hook): judged when written, not again."""
    legacy = memrepo.read("LOG.md") + f"\n## {TS.format(8, 0)} · cycle 1 · built\n- Task: t\n- Result: {BIG}\n"
    rules = memrepo.read("RULES.md").replace("## Proven rules\n", f"## Proven rules\n- R-01 · {'y' * 60000} (human)\n")
    start = memrepo.head()
    memrepo.commit_files({"LOG.md": legacy, "RULES.md": rules}, "before the size rules")
    assert cli(["verify", "--range", f"{memrepo.head()}..HEAD"], cwd=memrepo.path).code == 0
    verified = cli(["verify", "--range", f"{start}..HEAD"], cwd=memrepo.path)
    assert verified.code == 1          # the commit that made them is judged by the rules it breaks
    monkeypatch.setenv("GITMEM_CYCLE", "2")
    assert cli(["log", "add", "--task", "t", "--outcome", "built", "--result", "r"], cwd=memrepo.path).code == 0
    smaller = memrepo.read("RULES.md").replace("y" * 60000, "y" * 59000)
    memrepo.stage_files({"LOG.md": memrepo.read("LOG.md"), "RULES.md": smaller})
    assert cli(["check"], cwd=memrepo.path).code == 0     # new bytes are small; RULES only shrank
    memrepo.stage_files({"RULES.md": rules.replace("- R-01", "- R-02 · one more (human)\n- R-01")})
    grown = cli(["check"], cwd=memrepo.path)
    assert grown.code == 1 and " GM509 " in grown.out
    memrepo.stage_files({"RULES.md": smaller})
    memrepo.commit("after the upgrade")
    context = cli(["context"], cwd=memrepo.path)
    assert context.code == 0 and "Traceback" not in context.err


def test_a_legacy_huge_last_entry_is_cut_not_refused(memrepo: GitRepo, cli) -> None:
    memrepo.commit_files({"LOG.md": memrepo.read("LOG.md") + f"\n## {TS.format(8, 0)} · cycle 1 · built\n"
                                                             f"- Task: t\n- Result: {BIG}\n"}, "legacy")
    result = cli(["context"], cwd=memrepo.path)
    assert result.code == 0 and "cut here:" in result.out and BIG not in result.out
    assert "the last LOG entry is over its share of the context" in result.err


def test_a_smaller_budget_is_judged_on_the_memory_it_is_given(memrepo: GitRepo, cli) -> None:
    memrepo.commit_files({"RULES.md": memrepo.read("RULES.md").replace(
        "## Proven rules\n", f"## Proven rules\n- R-01 · {'z' * 20000} (human)\n")}, "a long rule")
    memrepo.stage_files({"gitmem.yaml": "cycle:\n  max_context_tokens: 8000\n"})
    result = cli(["check"], cwd=memrepo.path)
    assert result.code == 1 and [line.split(" ")[1] for line in result.lines] == ["GM509"]
    memrepo.stage_files({"gitmem.yaml": "timezone: UTC\n"})          # the budget itself did not change
    assert cli(["check"], cwd=memrepo.path).code == 0



def test_a_smaller_budget_judges_the_whole_last_log_entry_past_a_fenced_heading(memrepo: GitRepo, cli) -> None:
    entry = ("\n## 2026-01-02 10:00 UTC · cycle 7 · no-build\n- Task: t\n- Result: " + "z" * 5000
             + "\n```\n## not a heading, only an example of one\n```\n")
    memrepo.commit_files({"LOG.md": memrepo.read("LOG.md").rstrip("\n") + "\n" + entry}, "a long entry")
    memrepo.stage_files({"gitmem.yaml": "cycle:\n  max_context_tokens: 8000\n"})
    result = cli(["check"], cwd=memrepo.path)
    assert result.code == 1 and [line.split(" ")[1] for line in result.lines] == ["GM307"]


def test_a_config_change_that_keeps_the_budget_is_not_a_budget_change(memrepo: GitRepo, cli) -> None:
    # HEAD's config breaks only a rule new in this release (read leniently as history), and holds memory over
    # today's limits: a change to it that keeps the budget judges nothing old.
    memrepo.commit_files({"gitmem.yaml": "recall:\n  limit: 2000\n", "RULES.md": memrepo.read("RULES.md").replace(
        "## Proven rules\n", f"## Proven rules\n- R-01 · {'z' * 50000} (human)\n")}, "old config, long rule")
    memrepo.stage_files({"gitmem.yaml": "recall:\n  limit: 200\n"})
    assert cli(["check"], cwd=memrepo.path).code == 0

# -- the runner's per-file limit ------------------------------------------------------------------------------------

def _run(memrepo: GitRepo, act) -> object:
    from gitmem.cycle.runner import Settings, run_cycle
    from tests.support.cycle_support import WritingBackend

    return run_cycle(memrepo.ws(), WritingBackend(act), settings=Settings())


def test_a_200_mb_file_is_kept_out_of_the_commit_and_reported(memrepo: GitRepo) -> None:
    from tests.support.cycle_support import is_clean

    def act(memory, request) -> None:
        with open(request.root / "dump.bin", "wb") as handle:
            handle.truncate(200 * 1024 * 1024)          # sparse: 200 MB without writing them
        (request.root / "small.txt").write_text("kept\n", encoding="utf-8")
        memory.add_log_entry(task="t", outcome="built", result="r")
        memory.add_now_block(did="d", human="h", next="n")

    report = _run(memrepo, act)
    assert report.exit_code == 0 and report.commit is not None
    tree = memrepo.repo.head.peel(pygit2.Commit).tree
    assert "small.txt" in tree and "dump.bin" not in tree
    held = memrepo.path / ".git" / "gitmem" / "held" / f"cycle-{report.cycle}" / "dump.bin"
    assert held.stat().st_size == 200 * 1024 * 1024 and is_clean(memrepo)
    assert [(v.code, v.path, v.severity) for v in report.violations] == [("GM714", "dump.bin", "warning")]
    assert "kept dump.bin (209715200 bytes) out of the commit" in memrepo.read("LOG.md")
    # Named from the work tree: this machine's path has no place in committed memory.
    assert f"moved to .git/gitmem/held/cycle-{report.cycle}/dump.bin" in memrepo.read("LOG.md")
    assert str(memrepo.path) not in memrepo.read("LOG.md")


def test_a_tracked_file_grown_too_big_goes_back_to_its_committed_version(memrepo: GitRepo) -> None:
    memrepo.commit_files({"gitmem.yaml": "cycle:\n  max_file_bytes: 2048\n", "data.csv": "a,b\n"})

    def act(memory, request) -> None:
        (request.root / "data.csv").write_text("a,b\n" + "1,2\n" * 1000, encoding="utf-8")
        memory.add_log_entry(task="t", outcome="built", result="r")
        memory.add_now_block(did="d", human="h", next="n")

    report = _run(memrepo, act)
    assert report.exit_code == 0 and memrepo.read("data.csv") == "a,b\n"
    assert memrepo.repo.head.peel(pygit2.Commit).tree["data.csv"].data == b"a,b\n"
    held = memrepo.path / ".git" / "gitmem" / "held" / f"cycle-{report.cycle}" / "data.csv"
    assert held.read_text(encoding="utf-8").count("1,2") == 1000


def test_a_failed_cycle_never_salvages_a_file_too_big_to_push(memrepo: GitRepo) -> None:
    memrepo.commit_files({"gitmem.yaml": "cycle:\n  max_file_bytes: 2048\n"})

    def act(memory, request) -> None:
        (request.root / "huge.log").write_bytes(b"z" * 5000)
        (request.root / "notes.txt").write_text("work\n", encoding="utf-8")
        raise RuntimeError("the agent crashed")

    report = _run(memrepo, act)
    assert report.exit_code == 4 and report.salvage_branch
    saved = memrepo.repo.revparse_single(report.salvage_branch).peel(pygit2.Commit).tree
    assert "notes.txt" in saved and "huge.log" not in saved
    assert any("kept huge.log (5000 bytes) out of the commit" in m for m in report.messages)
    assert (memrepo.path / ".git" / "gitmem" / "held" / f"cycle-{report.cycle}" / "huge.log").stat().st_size == 5000


def _nested_repository(root: Path, name: str = "sub") -> None:
    import subprocess

    sub = root / name
    sub.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(sub)], check=True)
    (sub / "f.txt").write_text("the agent's own project\n", encoding="utf-8")
    subprocess.run(["git", "-C", str(sub), "add", "f.txt"], check=True)
    subprocess.run(["git", "-C", str(sub), "-c", "user.name=a", "-c", "user.email=a@b.invalid", "commit", "-qm",
                    "its history"], check=True)


def test_a_repository_the_agent_makes_in_the_tree_is_kept_aside_and_the_next_cycle_runs(memrepo: GitRepo) -> None:
    from tests.support.cycle_support import is_clean

    def act(memory, request) -> None:
        if not (request.root / "tools").exists():
            _nested_repository(request.root / "tools", "vendored")
        (request.root / "work.txt").write_text(f"cycle {request.cycle}\n", encoding="utf-8")
        memory.add_log_entry(task="t", outcome="built", result="r")
        memory.add_now_block(did="d", human="h", next="n")

    report = _run(memrepo, act)
    assert report.exit_code == 0 and is_clean(memrepo), report.error
    tree = memrepo.repo.head.peel(pygit2.Commit).tree
    assert "work.txt" in tree and "tools" not in tree
    held = memrepo.path / ".git" / "gitmem" / "held" / f"cycle-{report.cycle}" / "tools" / "vendored"
    assert pygit2.Repository(str(held / INERT_GIT)).head.peel(pygit2.Commit).message == "its history\n", "kept whole"
    assert [(v.code, v.path, v.severity) for v in report.violations] == [("GM720", "tools/vendored", "warning")]
    assert "kept tools/vendored/ out of the commit: it is a git repository of its own" in memrepo.read("LOG.md")
    # Before, the repository stayed as an untracked directory and every later cycle refused a dirty tree.
    again = _run(memrepo, act)
    assert again.exit_code == 0 and again.cycle == report.cycle + 1 and is_clean(memrepo), again.error


def _armed(sub: Path, marker: Path) -> None:
    """The agent's repository runs `marker`'s script wherever git looks at its work tree or commits in it."""
    import subprocess

    script = sub.parent / f"{sub.name}-monitor.sh"
    script.write_text(f"#!/bin/sh\necho \"$0 $*\" >> {marker}\n", encoding="utf-8")
    script.chmod(0o755)
    subprocess.run(["git", "-C", str(sub), "config", "core.fsmonitor", str(script)], check=True)
    hook = sub / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\necho hook >> {marker}\n", encoding="utf-8")
    hook.chmod(0o755)


def test_a_held_repository_runs_nothing_where_the_note_sends_the_human(memrepo: GitRepo, tmp_path: Path) -> None:
    import re
    import subprocess

    marker = tmp_path / "agent-ran"

    def act(memory, request) -> None:
        _nested_repository(request.root, "vendored")
        _nested_repository(request.root / "vendored", "deeper")      # one inside it, armed the same way
        for sub in (request.root / "vendored", request.root / "vendored" / "deeper"):
            _armed(sub, marker)
        subprocess.run(["git", "status"], cwd=request.root / "vendored", check=True, capture_output=True)
        assert marker.exists(), "armed: plain git status runs the agent's fsmonitor"
        marker.unlink()
        memory.add_log_entry(task="t", outcome="built", result="r")
        memory.add_now_block(did="d", human="h", next="n")

    report = _run(memrepo, act)
    assert report.exit_code == 0, report.error
    note = next(line for line in memrepo.read("LOG.md").splitlines() if "kept vendored/ out of the commit" in line)
    kept = re.search(r"moved to (\S+), its \.git renamed", note)
    clone = re.search(r"`git clone (\S+) <new directory>`", note)
    assert kept is not None and clone is not None, note
    place = memrepo.path / kept.group(1)
    # Where the note sends the human: git there finds no repository of the agent's, and runs nothing.
    for where in (place, place / "deeper"):
        subprocess.run(["git", "status"], cwd=where, capture_output=True)
        subprocess.run(["git", "log", "-1"], cwd=where, capture_output=True)
    copy = tmp_path / "look"
    done = subprocess.run(["git", "clone", "-q", clone.group(1), str(copy)], cwd=memrepo.path, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    for argv in (["status"], ["log", "-1", "--format=%s"], ["-c", "user.name=h", "-c", "user.email=h@b.invalid",
                                                          "commit", "-q", "--allow-empty", "-m", "look"]):
        subprocess.run(["git", *argv], cwd=copy, check=True, capture_output=True)
    assert (copy / "f.txt").read_text(encoding="utf-8") == "the agent's own project\n", "its history, whole"
    assert not marker.exists(), marker.read_text(encoding="utf-8")
    assert (place / INERT_GIT / "config").exists() and (place / "deeper" / INERT_GIT).exists(), "nothing lost"


def test_a_failed_cycle_keeps_a_repository_the_agent_made_aside_too(memrepo: GitRepo) -> None:
    from tests.support.cycle_support import is_clean

    def act(memory, request) -> None:
        _nested_repository(request.root)
        (request.root / "notes.txt").write_text("work\n", encoding="utf-8")
        raise RuntimeError("the agent crashed")

    report = _run(memrepo, act)
    assert report.exit_code == 4 and report.salvage_branch and is_clean(memrepo)
    saved = memrepo.repo.revparse_single(report.salvage_branch).peel(pygit2.Commit).tree
    assert "notes.txt" in saved and "sub" not in saved
    assert (memrepo.path / ".git" / "gitmem" / "held" / f"cycle-{report.cycle}" / "sub" / "f.txt").exists()


@pytest.mark.parametrize("value", ["0", "100", "100000001", "-5", "'big'"])
def test_the_file_size_limit_is_bounded(memrepo: GitRepo, cli, value: str) -> None:
    memrepo.write("gitmem.yaml", f"cycle:\n  max_file_bytes: {value}\n")
    result = cli(["check"], cwd=memrepo.path)
    assert result.code == 2 and "cycle.max_file_bytes" in result.err and "Traceback" not in result.err


def test_memory_files_grow_past_the_file_size_limit(memrepo: GitRepo) -> None:
    """LOG outgrows any fixed size over months; its entries are judged by GM307 instead."""
    memrepo.commit_files({"gitmem.yaml": "cycle:\n  max_file_bytes: 2048\n"})
    memrepo.commit_files({"LOG.md": memrepo.read("LOG.md") + "".join(
        f"\n## {TS.format(1, n)} · cycle {n} · built\n- Task: t{n}\n- Result: {'r' * 40}\n" for n in range(1, 40))})
    assert os.path.getsize(memrepo.path / "LOG.md") > 2048

    def act(memory, request) -> None:
        memory.add_log_entry(task="t", outcome="built", result="r")
        memory.add_now_block(did="d", human="h", next="n")

    report = _run(memrepo, act)
    assert report.exit_code == 0 and not report.violations


def test_a_history_built_by_the_previous_release_still_checks_clean(tmp_path: Path) -> None:
    """The synthetic agent repository (months of cycles, closes, decisions, lessons and rules, as the release
    before these rules wrote them): every commit verifies, the work tree checks, and the next context builds."""
    import shutil

    from gitmem.checks.check_and_verify import check_worktree, verify_range
    from tests.support.synth import cached_repo

    info = cached_repo(1)
    copy = shutil.copytree(info.path, tmp_path / "agent", symlinks=True)
    ws = Workspace.open(copy)
    result = verify_range(ws, None, "HEAD")
    assert result.commits == 1000 and result.violations == []
    assert check_worktree(ws) == []
    assert build_request(ws, cycle=info.cycles + 1).total_tokens <= limits(ws.config).hard


@pytest.mark.parametrize("points_to", ["ignored-folder", "outside"])
def test_a_repository_behind_a_gitdir_file_is_held_and_disarmed_too(memrepo: GitRepo, tmp_path: Path,
                                                                    points_to: str) -> None:
    """A folder holding only a `.git` file that names a repository in an ignored folder (or outside the tree):
    libgit2 called it ignored, so it stayed in the tree unreported, and `git status` there ran the agent's
    fsmonitor."""
    import subprocess

    from tests.support.cycle_support import is_clean

    memrepo.commit_files({".gitignore": "cache/\n"}, "ignore the cache")
    marker = tmp_path / "agent-ran"
    home = memrepo.path / "cache" if points_to == "ignored-folder" else tmp_path / "elsewhere"

    def act(memory, request) -> None:
        _nested_repository(home, "evil")
        _armed(home / "evil", marker)
        (request.root / "trap").mkdir()
        (request.root / "trap" / ".git").write_text(f"gitdir: {home / 'evil' / '.git'}\n", encoding="utf-8")
        memory.add_log_entry(task="t", outcome="built", result="r")
        memory.add_now_block(did="d", human="h", next="n")

    report = _run(memrepo, act)
    assert report.exit_code == 0, report.error
    assert not (memrepo.path / "trap").exists() and is_clean(memrepo)
    assert [(v.code, v.path) for v in report.violations] == [("GM720", "trap")]
    held = memrepo.path / ".git" / "gitmem" / "held" / f"cycle-{report.cycle}" / "trap"
    assert (held / INERT_GIT).read_text(encoding="utf-8").startswith("gitdir: "), "kept, disarmed"
    subprocess.run(["git", "status"], cwd=held, capture_output=True)
    assert not marker.exists()


def test_a_submodule_of_the_start_commit_the_agent_checks_out_stays(memrepo: GitRepo, tmp_path: Path) -> None:
    import subprocess

    _nested_repository(tmp_path, "lib")
    subprocess.run(["git", "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(tmp_path / "lib"),
                    "lib"], cwd=memrepo.path, check=True, capture_output=True)
    subprocess.run(["git", "-c", "user.name=h", "-c", "user.email=h@b.invalid", "commit", "-qm", "a submodule"],
                   cwd=memrepo.path, check=True)
    subprocess.run(["git", "submodule", "deinit", "-q", "-f", "lib"], cwd=memrepo.path, check=True)

    def act(memory, request) -> None:
        subprocess.run(["git", "-c", "protocol.file.allow=always", "submodule", "update", "-q", "--init", "lib"],
                       cwd=request.root, check=True, capture_output=True)
        memory.add_log_entry(task="t", outcome="built", result="r")
        memory.add_now_block(did="d", human="h", next="n")

    report = _run(memrepo, act)
    assert report.exit_code == 0, report.error
    assert report.violations == [] and (memrepo.path / "lib" / "f.txt").is_file()
    assert memrepo.repo.head.peel(pygit2.Commit).tree["lib"].filemode == pygit2.enums.FileMode.COMMIT
