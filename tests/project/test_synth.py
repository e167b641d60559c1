"""The synthetic-history generator builds valid, deterministic memory repos whose size follows the scale."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from datetime import UTC
from pathlib import Path

import pygit2
import pytest

from gitmem.checks.check_and_verify import check_staged, check_worktree, verify_range
from gitmem.config import Config
from gitmem.memory import decisions, lessons, log, now, rules
from gitmem.workspace import Workspace
from tests.support.synth import (
    HUMAN,
    SynthInfo,
    _templates,
    build_synthetic_repo,
    cached_repo,
)
from tests.support.synth.plan import make_plan
from tests.support.synth.state import make_state

SMALL = 0.05


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> SynthInfo:
    return build_synthetic_repo(tmp_path_factory.mktemp("synth") / "repo", scale=SMALL, seed=3)


def _read(info: SynthInfo, name: str) -> str:
    return (Path(info.path) / name).read_text(encoding="utf-8")


def test_whole_history_verifies(small: SynthInfo) -> None:
    result = verify_range(Workspace.at(small.path), None, "HEAD")
    assert result.violations == []
    assert result.commits == small.commits == 50


def test_work_tree_and_index_pass_check(small: SynthInfo) -> None:
    repo = pygit2.Repository(small.path)
    assert check_worktree(Workspace.at(small.path, Config())) == []
    assert check_staged(Workspace.at(small.path, Config())) == []
    assert repo.status(untracked_files="no") == {}


def test_gitmem_check_command_passes(small: SynthInfo, monkeypatch: pytest.MonkeyPatch) -> None:
    from gitmem.cli import main

    monkeypatch.chdir(small.path)
    assert main(["check", "--worktree"]) == 0
    assert main(["check"]) == 0


def test_counts_follow_the_scale(small: SynthInfo, tmp_path: Path) -> None:
    double = build_synthetic_repo(tmp_path / "double", scale=2 * SMALL, seed=3)
    for info, scale in ((small, SMALL), (double, 2 * SMALL)):
        text = _read(info, "LOG.md")
        doc = log.parse(text)
        assert info.log_lines == text.count("\n")
        assert abs(info.log_lines - 13265 * scale) <= 0.01 * 13265 * scale
        assert [e.cycle for e in doc.cycles] == list(range(1, round(480 * scale) + 1)) == \
            list(range(1, info.cycles + 1))
        assert info.commits == round(1000 * scale)
        commits = sum(1 for _ in pygit2.Repository(info.path).walk(pygit2.Repository(info.path).head.target))
        assert commits == info.commits
        assert doc.problems == ()
    assert abs(double.log_lines - 2 * small.log_lines) <= 1


def test_plan_at_full_scale_has_real_proportions() -> None:
    plan = make_plan(1.0, 0)
    state = make_state(plan, _templates(), HUMAN)
    assert plan.cycles == 480 and plan.commits == 1000
    assert len(state.decisions) == 40 and len(state.lessons) == 30
    pending = [d for d in state.decisions if d.resolved is None]
    assert 2 <= len(pending) <= 8
    assert sum(1 for r in state.rules if r.retired_at is None) == 18
    assert len(plan.facts) >= 30 and len(plan.superseded) == 2
    times = [e.when for e in plan.entries]
    assert times == sorted(times)
    assert sum(1 for e in plan.entries if e.cycle is None) == 59   # a close after every full day but the last


def test_planted_facts_point_at_entries_holding_the_query(small: SynthInfo) -> None:
    assert len(small.facts) >= 20
    for fact in small.facts:
        lines = _read(small, fact.path).split("\n")
        heading = lines[fact.line - 1]
        if fact.kind == "log":
            assert re.match(rf"^## .* · cycle {fact.ref} · ", heading)
        else:
            assert heading.split(" · ")[0].endswith(str(fact.ref))
        end = next((i for i in range(fact.line, len(lines)) if lines[i].startswith("#")), len(lines))
        entry = "\n".join(lines[fact.line - 1:end]).lower()
        for word in fact.query.split():
            assert word in entry, (fact, word)


def test_a_fact_is_superseded_by_a_later_entry(small: SynthInfo) -> None:
    assert small.superseded
    doc = log.parse(_read(small, "LOG.md"))
    by_cycle = {e.cycle: e for e in doc.cycles}
    for pair in small.superseded:
        old, new = by_cycle[pair.old.ref], by_cycle[pair.new.ref]
        assert old.when.moment < new.when.moment
        assert "replac" in new.render() or "moved" in new.render()
        assert pair.old.line == old.line and pair.new.line == new.line


def test_memory_files_are_realistic(small: SynthInfo) -> None:
    rule_doc = rules.parse(_read(small, "RULES.md"))
    assert rule_doc.line_count <= 200 and len(rule_doc.proven) == 18 and len(rule_doc.retired) == 4
    decision_doc = decisions.parse(_read(small, "DECISIONS.md"))
    assert decision_doc.pending and decision_doc.resolved
    assert all(d.answered and d.answered[2] == HUMAN[1] for d in decision_doc.resolved)
    lesson_doc = lessons.parse(_read(small, "LESSONS.md"))
    assert len(lesson_doc.lessons) == small.lessons >= 1
    blocks = now.parse(_read(small, "NOW.md")).blocks
    assert [b.when.moment for b in blocks] == sorted((b.when.moment for b in blocks), reverse=True)
    assert len(blocks) == len(log.parse(_read(small, "LOG.md")).entries)


def test_recent_commits_each_append_one_entry_by_the_agent(small: SynthInfo) -> None:
    repo = pygit2.Repository(small.path)
    commit = repo.head.peel(pygit2.Commit)
    for _ in range(10):
        parent = commit.parents[0]
        old, new = parent.tree["LOG.md"].data, commit.tree["LOG.md"].data
        assert new.startswith(old)
        assert len(log.parse(new[len(old):].decode(), expect_title=False).entries) == 1
        assert commit.tree["NOW.md"].id != parent.tree["NOW.md"].id
        assert commit.author.email == Config().agent.email
        commit = parent


def test_decisions_are_answered_by_the_human(small: SynthInfo) -> None:
    repo = pygit2.Repository(small.path)
    answers = [c for c in repo.walk(repo.head.target) if c.message.startswith("decisions: answer")]
    assert answers and all(c.author.email == HUMAN[1] for c in answers)


def test_same_seed_same_repo(small: SynthInfo, tmp_path: Path) -> None:
    again = build_synthetic_repo(tmp_path / "again", scale=SMALL, seed=3)
    other = build_synthetic_repo(tmp_path / "other", scale=SMALL, seed=4)
    assert again.head == small.head
    assert _read(again, "LOG.md") == _read(small, "LOG.md")
    assert other.head != small.head


@pytest.mark.skipif(shutil.which("git") is None, reason="needs the git command line")
def test_git_fsck_accepts_the_packs(small: SynthInfo) -> None:
    done = subprocess.run(["git", "fsck", "--strict"], cwd=small.path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_cache_builds_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITMEM_BENCH_CACHE", str(tmp_path / "cache"))
    first = cached_repo(0.02, seed=1)
    assert Path(first.path).is_relative_to(tmp_path / "cache")
    marker = Path(first.path) / "LOG.md"
    stamp = marker.stat().st_mtime_ns
    second = cached_repo(0.02, seed=1)
    assert second.path == first.path and second.head == first.head and second.facts == first.facts
    assert marker.stat().st_mtime_ns == stamp


def test_script_builds_a_repo(tmp_path: Path) -> None:
    script = Path(__file__).resolve().parents[2] / "benchmarks" / "make_synthetic.py"
    done = subprocess.run([sys.executable, str(script), "--scale", "0.02", str(tmp_path / "out")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "40 commits" in done.stdout and (tmp_path / "out" / "LOG.md").exists()
    again = subprocess.run([sys.executable, str(script), str(tmp_path / "out")], capture_output=True, text=True)
    assert again.returncode == 2 and "not empty" in again.stderr


def test_scale_must_be_positive(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        build_synthetic_repo(tmp_path / "x", scale=0)


@pytest.mark.parametrize("scale", [0.3, 0.7])
def test_in_between_scales_build_valid_histories_that_end_before_today(scale: float, tmp_path: Path) -> None:
    """Any scale works, and the last entry lies in the past, so a real cycle can follow it (GM302)."""
    from datetime import datetime

    from gitmem.checks.check_and_verify import check_worktree
    from gitmem.config import Config
    from gitmem.memory import log
    from gitmem.workspace import Workspace

    info = build_synthetic_repo(tmp_path / "repo", scale=scale, seed=1)
    assert check_worktree(Workspace.at(info.path, Config())) == []
    last = log.tail((Path(info.path) / "LOG.md").read_text(encoding="utf-8"), 1).entries[-1]
    assert last.when.moment < datetime.now(UTC)
