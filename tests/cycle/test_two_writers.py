"""Two writers: a scheduled cycle and a human's interactive session take the same cycle number at once.

A cycle number is a position in the merged history, not a claim: the side that lands second takes the next
numbers, by rule, whether the runner rebases over the session (the cycle's push), or a human merges a side
branch (`gitmem merge`, or `git merge`/`git rebase` through the merge driver `gitmem init` registers).
Real repositories: a bare origin, the runner's clone and the human's clone; the session runs from inside the
agent's run, with the real CLI.
"""
from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pygit2
import pytest

from gitmem.checks.check_and_verify import verify_range
from gitmem.config import Config
from gitmem.cycle.runner import Settings, run_cycle
from gitmem.errors import ExitCode
from gitmem.gitio import Repo
from gitmem.memory import decisions, log, now
from gitmem.workspace import Workspace
from tests.support.cycle_support import WritingBackend, built, clone, file_at, is_clean, origin_and_clone
from tests.support.gitcli import git, isolated_env
from tests.support.helpers import DANA, GitRepo, fill_in_rules


def session(repo: GitRepo, *argv: str, check: bool = True, shift: str = "") -> subprocess.CompletedProcess[str]:
    """The real CLI in the human's clone, as an interactive session runs it: not inside any cycle. `shift`
    (`-2h`, `+3h`) runs it on a clock that far off (libfaketime)."""
    env = isolated_env(who=DANA)
    env.pop("GITMEM_CYCLE", None)
    past = ["faketime", "-f", shift] if shift else []
    done = subprocess.run([*past, sys.executable, "-m", "gitmem", *argv], cwd=repo.path, env=env,
                          capture_output=True, text=True, check=False)
    if check and done.returncode != 0:
        raise AssertionError(f"gitmem {' '.join(argv)} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    return done


def session_cycle(repo: GitRepo, task: str, *, push: bool = True, shift: str = "") -> None:
    """One interactive session's cycle: a LOG entry and a NOW block, committed and pushed."""
    session(repo, "log", "add", "--task", task, "--outcome", "built", "--result", "done by hand", shift=shift)
    session(repo, "now", "add", "--did", task, "--human", "nothing", "--next", "more", shift=shift)
    git(repo.path, "add", "LOG.md", "NOW.md", who=DANA)
    git(repo.path, "commit", "--quiet", "-m", f"session: {task}", who=DANA)
    if push:
        git(repo.path, "push", "--quiet", "origin", "main", who=DANA)


def _raw(origin: Path) -> pygit2.Repository:
    return pygit2.Repository(str(origin))


def _cycles(text: str | None) -> list[int | None]:
    return [e.cycle for e in log.parse(text or "").entries]


def test_a_session_pushed_while_the_cycle_runs_takes_the_number_and_the_cycle_takes_the_next(
        tmp_path: Path, memrepo: GitRepo) -> None:
    origin = origin_and_clone(tmp_path, memrepo)
    start = memrepo.head()
    human = clone(origin, tmp_path / "dana", DANA)

    def cycle_while_a_session_pushes(memory, request) -> None:
        assert request.cycle == 1
        session_cycle(human, "fix the README by hand")       # the session takes cycle 1 first
        built("write hello.txt")(memory, request)

    report = run_cycle(memrepo.ws(), WritingBackend(cycle_while_a_session_pushes),
                       settings=Settings(push=True, sleep=lambda s: None))
    assert (report.exit_code, report.pushed, report.cycle) == (ExitCode.OK, True, 2)
    assert any("cycle 1 is cycle 2 now" in m for m in report.messages)
    remote = _raw(origin)
    entries = log.parse(file_at(remote, "refs/heads/main", "LOG.md") or "").entries
    assert [(e.cycle, e.get("Task")) for e in entries] == [(1, "fix the README by hand"), (2, "write hello.txt")]
    blocks = now.parse(file_at(remote, "refs/heads/main", "NOW.md") or "").blocks
    assert [(b.cycle, b.fields[0].value) for b in blocks[:2]] == [(2, "write hello.txt"),
                                                                  (1, "fix the README by hand")]
    tip = remote.revparse_single("refs/heads/main").peel(pygit2.Commit)
    assert tip.message.startswith("gitmem: cycle 2 · built · write hello.txt\n")
    assert "Gitmem-Cycle: 2\n" in tip.message
    assert verify_range(Workspace.for_repo(Repo(remote), Config()), start, "refs/heads/main").violations == []
    assert is_clean(memrepo)
    git(human.path, "pull", "--quiet", "--ff-only", who=DANA)
    assert session(human, "check").returncode == 0


def _human_with_a_session_branch(tmp_path: Path, memrepo: GitRepo, *, shift: str = "") -> tuple[Path, GitRepo]:
    """Cycle 1 on origin; the human's session logs cycle 2 on branch `laptop` (on a clock `shift` off); the runner's
    cycle 2 lands on main first. Returns (origin, the human's clone on main, up to date)."""
    origin = origin_and_clone(tmp_path, memrepo)
    earlier = (Settings(push=True, clock=lambda: datetime.now(UTC) - timedelta(hours=5)) if shift
               else Settings(push=True))
    assert run_cycle(memrepo.ws(), WritingBackend(built("first")), settings=earlier).pushed
    human = clone(origin, tmp_path / "dana", DANA)
    git(human.path, "switch", "--quiet", "-c", "laptop", who=DANA)
    session_cycle(human, "session on the laptop", push=False, shift=shift)
    second = run_cycle(memrepo.ws(), WritingBackend(built("second", {"b.txt": "b\n"})), settings=Settings(push=True))
    assert (second.cycle, second.pushed) == (2, True)
    git(human.path, "switch", "--quiet", "main", who=DANA)
    git(human.path, "pull", "--quiet", "--ff-only", who=DANA)
    return origin, human


def test_gitmem_merge_appends_the_other_sides_cycles_renumbered_after_ours(tmp_path: Path, memrepo: GitRepo) -> None:
    origin, human = _human_with_a_session_branch(tmp_path, memrepo)
    before = git(human.path, "rev-parse", "HEAD", who=DANA).strip()
    done = session(human, "merge", "laptop")
    assert "laptop's cycle 2 is cycle 3 now" in done.stdout
    entries = log.parse(human.read("LOG.md")).entries
    assert [(e.cycle, e.get("Task")) for e in entries] == [(1, "first"), (2, "second"), (3, "session on the laptop")]
    blocks = now.parse(human.read("NOW.md")).blocks
    assert sorted(b.cycle for b in blocks[:3] if b.cycle) == [1, 2, 3]
    tip = human.repo.head.peel(pygit2.Commit)
    assert len(tip.parents) == 2 and tip.message.startswith("gitmem: merge laptop")
    assert session(human, "check").returncode == 0
    assert session(human, "verify", "--range", f"{before}..HEAD").returncode == 0
    assert is_clean(human)


def test_a_merged_entry_older_than_ours_takes_the_merges_time_and_keeps_its_own(tmp_path: Path,
                                                                                 memrepo: GitRepo) -> None:
    origin, human = _human_with_a_session_branch(tmp_path, memrepo, shift="-2h")
    ours = log.parse(human.read("LOG.md")).entries[-1]
    theirs = log.parse(git(human.path, "show", "laptop:LOG.md", who=DANA)).entries[-1]
    assert (ours.cycle, theirs.cycle) == (2, 2) and theirs.when.moment < ours.when.moment
    before = git(human.path, "rev-parse", "HEAD", who=DANA).strip()
    session(human, "merge", "laptop")
    last = log.parse(human.read("LOG.md")).entries[-1]
    assert last.cycle == 3 and last.get("Merged") == f"{theirs.when} · cycle 2 · built"
    assert last.when.moment >= ours.when.moment and last.get("Task") == "session on the laptop"
    assert session(human, "check").returncode == 0
    assert session(human, "verify", "--range", f"{before}..HEAD").returncode == 0


def _two_clones_with_the_driver(tmp_path: Path, memrepo: GitRepo) -> tuple[GitRepo, GitRepo]:
    """`gitmem init` (the real CLI) registers the merge driver; .gitattributes is committed and pushed, and a
    second clone registers it for itself with `gitmem init` too."""
    origin = origin_and_clone(tmp_path, memrepo)
    first = clone(origin, tmp_path / "dana", DANA)
    out = session(first, "init").stdout
    assert "merge.gitmem.driver" in out and ".gitattributes" in out
    assert "/LOG.md merge=gitmem" in first.read(".gitattributes")
    git(first.path, "add", ".gitattributes", who=DANA)
    git(first.path, "commit", "--quiet", "-m", "merge memory by memory rules", who=DANA)
    git(first.path, "push", "--quiet", "origin", "main", who=DANA)
    second = clone(origin, tmp_path / "laptop", DANA)
    session(second, "init")
    return first, second


def test_init_never_overwrites_a_merge_attribute_or_driver_the_user_has(tmp_path: Path, memrepo: GitRepo) -> None:
    memrepo.write(".gitattributes", "/NOW.md merge=union\n*.png binary\n")
    git(memrepo.path, "config", "merge.gitmem.driver", "my-own-driver %A", who=DANA)
    done = session(memrepo, "init")
    attributes = memrepo.read(".gitattributes")
    assert attributes.startswith("/NOW.md merge=union\n*.png binary\n")
    assert "/NOW.md merge=gitmem" not in attributes and "/LOG.md merge=gitmem" in attributes
    assert git(memrepo.path, "config", "merge.gitmem.driver", who=DANA).strip() == "my-own-driver %A"
    assert "merge=union" in done.stderr and "my-own-driver" in done.stderr
    session(memrepo, "init")
    assert memrepo.read(".gitattributes") == attributes       # twice changes nothing


def test_git_merge_and_git_rebase_renumber_the_other_sides_cycle_through_the_driver(tmp_path: Path,
                                                                                     memrepo: GitRepo) -> None:
    first, second = _two_clones_with_the_driver(tmp_path, memrepo)
    session_cycle(first, "from the desktop")                  # cycle 1, pushed
    session_cycle(second, "from the laptop", push=False)      # cycle 1 too, local
    before = git(second.path, "rev-parse", "origin/main", who=DANA).strip()
    desktop = log.parse(first.read("LOG.md")).entries[-1]
    # A merge: the branch merged in (origin's) follows ours, renumbered, with its own heading kept (the entry
    # itself is dated at the merge, which may fall in a later minute than the heading it keeps).
    git(second.path, "pull", "--quiet", "--no-rebase", "--no-edit", "origin", "main", who=DANA)
    entries = log.parse(second.read("LOG.md")).entries
    assert [(e.cycle, e.get("Task")) for e in entries] == [(1, "from the laptop"), (2, "from the desktop")]
    assert entries[1].get("Merged") == f"{desktop.when} · cycle 1 · built"
    assert sorted((b.cycle, b.fields[0].value) for b in now.parse(second.read("NOW.md")).blocks[:2]) == [
        (1, "from the laptop"), (2, "from the desktop")]
    assert session(second, "check").returncode == 0
    assert session(second, "verify", "--range", f"{before}..HEAD").returncode == 0

    session_cycle(first, "desktop again")                     # cycle 2 on origin
    # A rebase: the commits replayed (the laptop's) follow the upstream's.
    git(second.path, "reset", "--quiet", "--hard", "HEAD^1", who=DANA)   # back to the laptop's own commit
    git(second.path, "pull", "--quiet", "--rebase", "origin", "main", who=DANA)
    entries = log.parse(second.read("LOG.md")).entries
    assert [(e.cycle, e.get("Task")) for e in entries] == [(1, "from the desktop"), (2, "desktop again"),
                                                            (3, "from the laptop")]
    assert session(second, "check").returncode == 0
    upstream = git(second.path, "rev-parse", "origin/main", who=DANA).strip()
    assert session(second, "verify", "--range", f"{upstream}..HEAD").returncode == 0


def test_the_driver_leaves_gits_conflict_when_the_same_block_changed_on_both_sides(tmp_path: Path,
                                                                                    memrepo: GitRepo) -> None:
    first, second = _two_clones_with_the_driver(tmp_path, memrepo)
    session_cycle(first, "a block to edit")
    git(second.path, "pull", "--quiet", "--ff-only", who=DANA)
    for repo, words in ((first, "Next as the desktop wants"), (second, "Next as the laptop wants")):
        text = repo.read("NOW.md")
        block = now.parse(text).blocks[0]
        repo.write("NOW.md", text.replace(block.fields[2].value, words, 1))
        git(repo.path, "commit", "--quiet", "-am", words, who=DANA)
    git(first.path, "push", "--quiet", "origin", "main", who=DANA)
    failed = subprocess.run(["git", "pull", "--no-rebase", "--no-edit", "origin", "main"], cwd=second.path,
                            env=isolated_env(who=DANA), capture_output=True, text=True, check=False)
    assert failed.returncode != 0 and "CONFLICT" in failed.stdout + failed.stderr
    text = second.read("NOW.md")
    assert "<<<<<<<" in text and "Next as the desktop wants" in text and "Next as the laptop wants" in text


def test_a_second_now_add_before_the_log_entry_is_refused_and_log_add_takes_the_same_number(
        memrepo: GitRepo) -> None:
    session(memrepo, "now", "add", "--did", "started", "--human", "nothing", "--next", "log it")   # opens cycle 1
    second = session(memrepo, "now", "add", "--did", "again", "--human", "nothing", "--next", "x", check=False)
    assert second.returncode == 1
    assert "NOW already has the block for cycle 1" in second.stderr and "gitmem log add" in second.stderr
    assert [b.cycle for b in now.parse(memrepo.read("NOW.md")).blocks] == [1]
    session(memrepo, "log", "add", "--task", "t", "--outcome", "built", "--result", "r")
    assert [e.cycle for e in log.parse(memrepo.read("LOG.md")).entries] == [1]
    memrepo.stage("LOG.md", "NOW.md")
    memrepo.commit("session 1")                  # a session's LOG entry is its one: the next comes after the commit
    session(memrepo, "now", "add", "--did", "next one", "--human", "nothing", "--next", "x")     # opens cycle 2
    session(memrepo, "log", "add", "--task", "t2", "--outcome", "built", "--result", "r2")
    assert [e.cycle for e in log.parse(memrepo.read("LOG.md")).entries] == [1, 2]
    assert [b.cycle for b in now.parse(memrepo.read("NOW.md")).blocks] == [2, 1]
    assert session(memrepo, "check", "--worktree").returncode == 0


def _now_block(cycle: int, minute: int) -> str:
    return f"## 2026-12-01 10:{minute:02d} UTC · cycle {cycle}\n- Did: d\n- Human: nothing\n- Next: n\n\n"


def test_check_says_when_now_names_a_cycle_log_skipped_or_runs_ahead_of_log(memrepo: GitRepo) -> None:
    memrepo.write("LOG.md", memrepo.read("LOG.md") + "\n## 2026-12-01 10:00 UTC · cycle 5 · built\n- Task: t\n"
                  "- Result: r\n\n## 2026-12-01 10:05 UTC · cycle 7 · built\n- Task: t\n- Result: r\n")
    memrepo.commit_files({"LOG.md": memrepo.read("LOG.md")}, "history with a gap, committed before")
    text = memrepo.read("NOW.md")
    top = text.index("\n## ") + 1 if "\n## " in text else len(text)
    memrepo.write("NOW.md", text[:top] + _now_block(292, 20) + _now_block(7, 12) + _now_block(6, 11)
                  + text[top:])
    done = session(memrepo, "check", "--worktree", check=False)
    assert done.returncode == 1
    assert "GM105 the NOW block for cycle 292 is ahead of LOG, whose last cycle is 7" in done.stdout
    assert "GM105 the NOW block for cycle 6 has no LOG entry, and the next cycle is 8" in done.stdout
    assert "cycle 7 " not in done.stdout.replace("last cycle is 7", "")
    memrepo.write("NOW.md", text[:top] + _now_block(8, 20) + _now_block(7, 12) + text[top:])
    assert session(memrepo, "check", "--worktree").returncode == 0


# -- No work only on the runner's disk ----------------------------------------------------------------------------

def _crash(memory, request) -> None:
    (request.root / "work.txt").write_text("half done\n", encoding="utf-8")
    raise RuntimeError("the model went away")


def _remote_heads(origin: Path) -> set[str]:
    return {line.split("refs/heads/")[1] for line in git(origin, "for-each-ref", "--format=%(refname)",
                                                         "refs/heads/").splitlines()}


def test_a_salvage_branch_made_before_a_refused_write_is_pushed_and_named(tmp_path: Path, memrepo: GitRepo) -> None:
    from gitmem.errors import GitmemError

    origin = origin_and_clone(tmp_path, memrepo)
    human = clone(origin, tmp_path / "dana", DANA)
    session_cycle(human, "from a laptop whose clock runs fast", shift="+3h")     # dated three hours ahead
    git(memrepo.path, "pull", "--quiet", "--ff-only", who=DANA)
    try:
        report = run_cycle(memrepo.ws(), WritingBackend(_crash), settings=Settings(push=True, sleep=lambda s: None))
        said = "\n".join(report.messages)
    except GitmemError as err:          # the salvage's own write refused: the branch is pushed all the same
        said = "\n".join([str(err), *getattr(err, "__notes__", ())])
    salvage = next(name for name in _remote_heads(origin) if name.startswith("gitmem/salvage/cycle-"))
    assert file_at(_raw(origin), f"refs/heads/{salvage}", "work.txt") == "half done\n"
    assert f"pushed {salvage} to origin" in said


def test_every_branch_the_cycle_made_is_pushed_when_main_is_protected(tmp_path: Path, memrepo: GitRepo) -> None:
    from gitmem.views.actions import cycle_summary
    from tests.support.gitcli import protect_branches

    origin = origin_and_clone(tmp_path, memrepo)
    protect_branches(origin, "main")
    report = run_cycle(memrepo.ws(), WritingBackend(_crash), settings=Settings(push=True, sleep=lambda s: None))
    assert report.exit_code == ExitCode.SALVAGED and report.push_status == "refused"
    heads = _remote_heads(origin)
    assert {"gitmem/salvage/cycle-1", report.side_branch} <= heads
    assert file_at(_raw(origin), "refs/heads/gitmem/salvage/cycle-1", "work.txt") == "half done\n"
    assert report.branches_pushed == ["gitmem/salvage/cycle-1"]
    summary = cycle_summary(report)
    assert "`gitmem/salvage/cycle-1`" in summary and f"`{report.side_branch}`" in summary
    assert "- Branches pushed: `gitmem/salvage/cycle-1`" in summary


# -- The close in a named workspace merges as the default one does ------------------------------------------------

@pytest.mark.parametrize("workspace", ["", "ops"])
def test_close_push_merges_a_concurrent_log_append_in_any_workspace(tmp_path: Path, memrepo: GitRepo,
                                                                    workspace: str) -> None:
    memrepo.write("gitmem.yaml", memrepo.read("gitmem.yaml") + "\nworkspaces:\n  ops:\n    memory_dir: ops\n")
    session(memrepo, "init", ".")
    fill_in_rules(memrepo.path)
    git(memrepo.path, "add", "-A", who=DANA)
    git(memrepo.path, "commit", "--quiet", "-m", "a second workspace, ops", who=DANA)
    origin = origin_and_clone(tmp_path, memrepo)
    chosen = ["--workspace", workspace] if workspace else []
    prefix = f"{workspace}/" if workspace else ""
    session(memrepo, "log", "add", *chosen, "--task", "the day's work", "--outcome", "built", "--result", "r")
    git(memrepo.path, "commit", "--quiet", "-am", "a cycle of the day", who=DANA)
    git(memrepo.path, "push", "--quiet", "origin", "main", who=DANA)
    human = clone(origin, tmp_path / "dana", DANA)
    session(human, "log", "add", *chosen, "--task", "a session meanwhile", "--outcome", "built", "--result", "r")
    git(human.path, "commit", "--quiet", "-am", "session meanwhile", who=DANA)
    git(human.path, "push", "--quiet", "origin", "main", who=DANA)       # both append to the same LOG
    done = session(memrepo, "close", "--push", "--no-llm", *chosen, check=False)
    assert done.returncode == ExitCode.OK, done.stdout + done.stderr
    entries = log.parse(file_at(_raw(origin), "refs/heads/main", f"{prefix}LOG.md") or "").entries
    assert [e.kind for e in entries][-3:] == ["cycle", "cycle", "close"]
    assert not _remote_heads(origin) - {"main"}


def test_the_job_summary_names_the_side_branch_of_a_conflict_and_how_to_land_it() -> None:
    from gitmem.publish.push import PushReport, PushStatus
    from gitmem.views.actions import push_summary

    lines = push_summary(PushReport(PushStatus.CONFLICT, "gitmem/close-2026-12-06"))
    assert lines == ["- Push: **conflict**; the work is on branch `gitmem/close-2026-12-06` (on the remote too): "
                     "land it by memory rules with `gitmem merge origin/gitmem/close-2026-12-06` after `git fetch`"]


def test_git_rebase_replays_several_cycle_commits_each_after_the_last(tmp_path: Path, memrepo: GitRepo) -> None:
    first, second = _two_clones_with_the_driver(tmp_path, memrepo)
    session_cycle(second, "laptop one", push=False)
    session_cycle(second, "laptop two", push=False)
    session_cycle(first, "desktop")                             # cycle 1 reaches origin first
    git(second.path, "pull", "--quiet", "--rebase", "origin", "main", who=DANA)
    entries = log.parse(second.read("LOG.md")).entries
    assert [(e.cycle, e.get("Task")) for e in entries] == [(1, "desktop"), (2, "laptop one"), (3, "laptop two")]
    assert sorted(b.cycle for b in now.parse(second.read("NOW.md")).blocks if b.cycle) == [1, 2, 3]
    assert session(second, "check").returncode == 0
    upstream = git(second.path, "rev-parse", "origin/main", who=DANA).strip()
    assert session(second, "verify", "--range", f"{upstream}..HEAD").returncode == 0


def test_a_session_asking_while_the_cycle_asks_takes_the_id_and_the_cycles_question_takes_the_next(
        tmp_path: Path, memrepo: GitRepo) -> None:
    """Both writers ask the next decision ID at once: the session's lands first, and the cycle's question takes
    the ID after it, with every mention in what the cycle wrote (its LOG entry, NOW block and the cycle its
    question names). Before, the push conflicted in DECISIONS (exit 4) and `gitmem merge` refused the branch."""
    origin = origin_and_clone(tmp_path, memrepo)
    start = memrepo.head()
    human = clone(origin, tmp_path / "dana", DANA)

    def ask_while_a_session_asks(memory, request) -> None:
        session(human, "decision", "ask", "--title", "Rename the CLI?", "--recommendation", "no")
        git(human.path, "add", "DECISIONS.md", who=DANA)
        session_cycle(human, "asked D-0001 by hand")           # the session takes cycle 1 and D-0001 first
        asked = memory.ask_decision(title="Publish to PyPI?", recommendation="yes, on the next release")
        assert asked.id == "D-0001"
        memory.add_log_entry(task="ask about PyPI", outcome="no-build", result="waiting on D-0001",
                             blocked="D-0001")
        memory.add_now_block(did="asked D-0001", human="answer D-0001", next="publish once D-0001 says yes")

    report = run_cycle(memrepo.ws(), WritingBackend(ask_while_a_session_asks),
                       settings=Settings(push=True, sleep=lambda s: None))
    assert (report.exit_code, report.pushed, report.cycle) == (ExitCode.OK, True, 2), report.messages
    assert any("this side's D-0001 is D-0002 now" in m for m in report.messages)
    remote = _raw(origin)
    pending = decisions.parse(file_at(remote, "refs/heads/main", "DECISIONS.md") or "").pending
    assert [(d.id, d.title, d.get("Asked").split("(")[-1]) for d in pending] == [
        ("D-0002", "Publish to PyPI?", "cycle 2)"), ("D-0001", "Rename the CLI?", "cycle 1)")]
    entry = log.parse(file_at(remote, "refs/heads/main", "LOG.md") or "").entries[-1]
    assert (entry.cycle, entry.get("Result"), entry.blocked_by) == (2, "waiting on D-0002", ("D-0002",))
    top = now.parse(file_at(remote, "refs/heads/main", "NOW.md") or "").blocks[0]
    assert [f.value for f in top.fields] == ["asked D-0002", "answer D-0002", "publish once D-0002 says yes"]
    assert verify_range(Workspace.for_repo(Repo(remote), Config()), start, "refs/heads/main").violations == []
    git(human.path, "pull", "--quiet", "--ff-only", who=DANA)
    assert session(human, "check").returncode == 0


def test_gitmem_merge_gives_the_other_sides_question_the_id_after_ours(tmp_path: Path, memrepo: GitRepo) -> None:
    """A session on a side branch asked the ID a cycle on main asked meanwhile: `gitmem merge` lands both, the
    branch's question under the next ID (its LOG entry stays as written: history in that parent)."""
    origin = origin_and_clone(tmp_path, memrepo)
    human = clone(origin, tmp_path / "dana", DANA)
    git(human.path, "switch", "--quiet", "-c", "laptop", who=DANA)
    session(human, "decision", "ask", "--title", "Rename the CLI?", "--recommendation", "no")
    git(human.path, "add", "DECISIONS.md", who=DANA)
    session(human, "log", "add", "--task", "ask D-0001", "--outcome", "no-build", "--result", "D-0001 is open")
    git(human.path, "add", "LOG.md", who=DANA)
    git(human.path, "commit", "--quiet", "-m", "session: ask", who=DANA)

    def ask(memory, request) -> None:
        memory.ask_decision(title="Publish to PyPI?", recommendation="yes")
        memory.add_log_entry(task="ask about PyPI", outcome="no-build", result="waiting on D-0001")
        memory.add_now_block(did="asked D-0001", human="answer D-0001", next="wait")

    assert run_cycle(memrepo.ws(), WritingBackend(ask), settings=Settings(push=True)).pushed
    git(human.path, "switch", "--quiet", "main", who=DANA)
    git(human.path, "pull", "--quiet", "--ff-only", who=DANA)
    before = git(human.path, "rev-parse", "HEAD", who=DANA).strip()
    done = session(human, "merge", "laptop")
    assert "D-0001 is D-0002 now" in done.stdout
    doc = decisions.parse(human.read("DECISIONS.md"))
    assert sorted((d.id, d.title) for d in doc.pending) == [("D-0001", "Publish to PyPI?"),
                                                            ("D-0002", "Rename the CLI?")]
    entries = log.parse(human.read("LOG.md")).entries
    assert [(e.cycle, e.get("Task")) for e in entries] == [(1, "ask about PyPI"), (2, "ask D-0001")]
    assert session(human, "check").returncode == 0
    assert session(human, "verify", "--range", f"{before}..HEAD").returncode == 0


def test_a_cycle_that_confirmed_a_lesson_and_was_renumbered_by_its_push_still_has_its_confirmation_counted(
        tmp_path: Path, memrepo: GitRepo) -> None:
    """A confirmation counts only when its commit logs the cycle it cites (gitmem.close.backing). The push's rebase
    renumbered the cycle's LOG entry and NOW block after a session's, but left its Confirmed line citing the
    session's number: the confirmation no longer counted, and the close never promoted the lesson."""
    from gitmem.close.backing import backing_for
    from gitmem.memory import lessons

    origin = origin_and_clone(tmp_path, memrepo)

    def learns(memory, request) -> None:
        memory.add_lesson(title="measure first", happened="guessed", why="no numbers", change="measure",
                          cycle=request.cycle)
        built("learn")(memory, request)

    assert run_cycle(memrepo.ws(), WritingBackend(learns), settings=Settings(push=True)).pushed
    human = clone(origin, tmp_path / "dana", DANA)

    def confirms_while_a_session_pushes(memory, request) -> None:
        assert request.cycle == 2
        session_cycle(human, "fix the README by hand")       # the session takes cycle 2 first
        memory.confirm_lesson("L-0001", evidence="measured, and it held", cycle=request.cycle)
        built("measure")(memory, request)

    report = run_cycle(memrepo.ws(), WritingBackend(confirms_while_a_session_pushes),
                       settings=Settings(push=True, sleep=lambda s: None))
    assert (report.exit_code, report.pushed, report.cycle) == (ExitCode.OK, True, 3)
    lesson = lessons.parse(memrepo.read("LESSONS.md")).lessons[0]
    [(confirmed, event)] = lesson.confirmations
    assert event is not None and event.cycle == 3, confirmed.value
    assert backing_for(memrepo.ws())(lesson, confirmed).ok
    assert session(memrepo, "check").returncode == 0


# -- An amendment moved by a merge or a rebase ----------------------------------------------------------------

def _bad_entry_amended_on_the_laptop(second: GitRepo) -> None:
    """The laptop's session: an entry without a Task, committed past the hook, then repaired by `gitmem log amend`
    (docs/format.md, "Amending LOG"); neither is pushed yet."""
    second.append("LOG.md", "\n## 2026-12-01 10:00 UTC · cycle 1 · built\n- Result: forgot the task\n"
                            "- Session: interactive\n")
    git(second.path, "commit", "--quiet", "--no-verify", "-am", "typed by hand", who=DANA)
    bad = log.parse(second.read("LOG.md")).entries[-1]
    session(second, "log", "amend", "--line", str(bad.line), "--task", "the task it forgot", "--outcome", "built",
            "--result", "forgot the task")
    git(second.path, "commit", "--quiet", "-am", "amend the entry typed by hand", who=DANA)


def _still_amends_its_entry(repo: GitRepo, since: str) -> None:
    """The amendment still supersedes the entry typed by hand, wherever the two landed, and the history passes."""
    entries = log.parse(repo.read("LOG.md")).entries
    amendment = entries[-1]
    target = next(e for e in entries if e.get("Result") == "forgot the task" and e.get("Task") is None)
    assert amendment.amends == target.line and amendment.get("Task") == "the task it forgot"
    assert [e.get("Task") for e in log.live(entries)][-1] == "the task it forgot"
    assert session(repo, "check").returncode == 0
    done = session(repo, "verify", "--range", f"{since}..HEAD", check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_git_rebase_keeps_an_amendment_amending_the_entry_it_names_at_its_new_line(tmp_path: Path,
                                                                                    memrepo: GitRepo) -> None:
    first, second = _two_clones_with_the_driver(tmp_path, memrepo)
    _bad_entry_amended_on_the_laptop(second)
    session_cycle(first, "from the desktop")                    # cycle 1 reaches origin first
    git(second.path, "pull", "--quiet", "--rebase", "origin", "main", who=DANA)
    _still_amends_its_entry(second, git(second.path, "rev-parse", "origin/main", who=DANA).strip())


def test_git_merge_keeps_an_amendment_amending_the_entry_it_names_at_its_new_line(tmp_path: Path,
                                                                                   memrepo: GitRepo) -> None:
    first, second = _two_clones_with_the_driver(tmp_path, memrepo)
    _bad_entry_amended_on_the_laptop(first)                     # on origin's side: the merge brings it in
    git(first.path, "push", "--quiet", "origin", "main", who=DANA)
    session_cycle(second, "from the laptop", push=False)
    git(second.path, "pull", "--quiet", "--no-rebase", "--no-edit", "origin", "main", who=DANA)
    # What the required check verifies when the merge is pushed: the laptop's commits and the merge.
    _still_amends_its_entry(second, git(second.path, "rev-parse", "origin/main", who=DANA).strip())


# -- A session in the checkout a cycle runs in ----------------------------------------------------------------

def test_a_session_writing_in_the_checkout_a_cycle_runs_in_is_refused_and_the_cycle_keeps_its_own_entry(
        memrepo: GitRepo) -> None:
    """A human's session (an agent CLI with the MCP tools, or `gitmem log add` in a shell) in the very checkout
    a local scheduled cycle runs in: the runner cannot tell whose bytes the work tree holds, so the session's
    entry would be committed as the agent's words and its NOW block dropped. The session's write is refused,
    naming the running cycle; the cycle's agent (GITMEM_CYCLE set) writes as before."""
    refused: list[subprocess.CompletedProcess[str]] = []

    def a_session_writes_here_meanwhile(memory, request) -> None:
        refused.append(session(memrepo, "log", "add", "--task", "the human's own task", "--outcome", "built",
                               "--result", "by hand", check=False))
        refused.append(session(memrepo, "now", "add", "--did", "by hand", "--human", "x", "--next", "y",
                               check=False))
        built("write hello.txt")(memory, request)

    report = run_cycle(memrepo.ws(), WritingBackend(a_session_writes_here_meanwhile), settings=Settings())
    assert [done.returncode for done in refused] == [1, 1], [done.stderr for done in refused]
    assert all("a cycle is running in this checkout" in done.stderr for done in refused)
    assert report.exit_code == ExitCode.OK
    entries = log.parse(memrepo.read("LOG.md")).entries
    assert [(e.cycle, e.get("Task")) for e in entries] == [(1, "write hello.txt")]
    assert "by hand" not in memrepo.read("NOW.md")
    assert session(memrepo, "log", "add", "--task", "after the cycle", "--outcome", "built",
                   "--result", "r").returncode == 0                  # the cycle ended: sessions write again


def test_a_sessions_stop_hook_leaves_a_running_cycles_work_alone_and_its_commit_is_not_the_sessions(
        memrepo: GitRepo) -> None:
    """A human's Claude Code session in the checkout a scheduled cycle runs in: its Stop hook, fired while the
    cycle's agent has written hello.txt and its entry, must not take those files for the session's and ask it to
    log (that write is refused while the cycle runs). It says why, quietly, and exits 0. After the cycle, the
    runner's commit is not the session's change either."""
    from tests.support.sessions import hook

    stops = []
    hook("session-start", memrepo.path)

    def a_session_stops_here_meanwhile(memory, request) -> None:
        built("write hello.txt")(memory, request)
        stops.append(hook("stop", memrepo.path, stop_hook_active=False))

    report = run_cycle(memrepo.ws(), WritingBackend(a_session_stops_here_meanwhile), settings=Settings())
    assert report.exit_code == ExitCode.OK
    [during] = stops
    assert (during.code, during.output, during.out) == (0, None, ""), during
    assert "a cycle is running in this checkout" in during.err, during.err
    assert "Rule 0 is not enforced until it ends" in during.err
    after = hook("stop", memrepo.path, stop_hook_active=False)
    assert (after.code, after.output) == (0, None), after
    # The session's own work still counts once the cycle is done.
    memrepo.write("src/app.py", "print('hi')\n")
    blocked = hook("stop", memrepo.path, stop_hook_active=False)
    assert blocked.output is not None and blocked.output["decision"] == "block"
    assert "changed files (src/app.py) but wrote no LOG entry" in blocked.output["reason"]


def test_both_sides_amending_the_same_entry_is_left_to_the_human_by_the_driver_as_by_gitmem_merge(
        tmp_path: Path, memrepo: GitRepo) -> None:
    """Two amendments of one entry cannot both stand (GM313, "already amends"): the merge driver leaves git's
    conflict, as `gitmem merge` refuses, instead of committing a merge that `verify` fails."""
    first, second = _two_clones_with_the_driver(tmp_path, memrepo)
    first.append("LOG.md", "\n## 2026-12-01 10:00 UTC · cycle 1 · built\n- Result: forgot the task\n")
    git(first.path, "commit", "--quiet", "--no-verify", "-am", "typed by hand", who=DANA)
    git(first.path, "push", "--quiet", "origin", "main", who=DANA)
    git(second.path, "pull", "--quiet", "--ff-only", "origin", "main", who=DANA)
    line = log.parse(first.read("LOG.md")).entries[-1].line
    for repo, words in ((first, "the desktop's repair"), (second, "the laptop's repair")):
        session(repo, "log", "amend", "--line", str(line), "--task", words, "--outcome", "built", "--result", "r")
        git(repo.path, "commit", "--quiet", "-am", words, who=DANA)
    git(first.path, "push", "--quiet", "origin", "main", who=DANA)
    git(second.path, "fetch", "--quiet", "origin", who=DANA)
    before = second.read("LOG.md")
    refused = session(second, "merge", "origin/main", check=False)
    assert refused.returncode == 1
    assert "LOG.md:1: GM924 LOG.md does not merge with origin/main by memory rules" in refused.stderr.splitlines()[1]
    failed = subprocess.run(["git", "pull", "--no-rebase", "--no-edit", "origin", "main"], cwd=second.path,
                            env=isolated_env(who=DANA), capture_output=True, text=True, check=False)
    assert failed.returncode != 0 and "CONFLICT" in failed.stdout + failed.stderr
    text = second.read("LOG.md")
    assert "<<<<<<<" in text and "the desktop's repair" in text and "the laptop's repair" in text
    assert text != before


def test_a_session_write_under_way_as_a_cycle_starts_is_never_committed_as_the_agents(tmp_path: Path,
                                                                                      memrepo: GitRepo) -> None:
    """A human's Claude Code session and a scheduled cycle in the same clone, at the same moment. The session's
    `log add` checked that no cycle runs and is writing (it holds the memory write lock from that check to its
    last byte) when the cycle starts: the cycle waits for that write, then finds the session's entry in the tree
    and refuses (exit 3, naming LOG.md). It never runs its agent on a tree the session is still writing, which
    would commit the session's entry as the agent's words."""
    import time

    from gitmem import gitio
    from gitmem.memory.timestamps import Timestamp
    from gitmem.workspace import cyclelock, writelock
    from tests.support.helpers import AGENT
    from tests.support.hostile import GITMEM, command_agent

    started = tmp_path / "agent-started"
    command_agent(tmp_path, memrepo, f"open({str(started)!r}, 'w').close()")
    before = git(memrepo.path, "rev-parse", "HEAD").strip()
    state = gitio.state_dir(Repo(memrepo.repo))
    env = isolated_env(who=AGENT)
    env.pop("ANTHROPIC_API_KEY", None)
    with writelock.held(state):                       # the session's write, past its check
        assert cyclelock.running(state) is None
        cycle = subprocess.Popen([str(GITMEM), "cycle"], cwd=memrepo.path, env=env, text=True,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        ends = time.monotonic() + 4
        while time.monotonic() < ends and not started.exists():
            time.sleep(0.05)
        entry = log.make_entry(Timestamp.from_datetime(datetime.now(UTC)), cycle=1, outcome="built",
                               fields={"Task": "the human's own task", "Result": "by hand",
                                       "Session": "interactive"})
        memrepo.write("LOG.md", memrepo.read("LOG.md").rstrip("\n") + f"\n\n{entry.render()}\n")   # its last byte
    out, err = cycle.communicate(timeout=120)
    assert cycle.returncode == ExitCode.DIRTY, out + err
    assert "modified: LOG.md" in err and not started.exists()
    assert git(memrepo.path, "rev-parse", "HEAD").strip() == before
    assert "the human's own task" in memrepo.read("LOG.md")        # still the human's, in the work tree
