"""gitmem.publish.push.publish against real bare origins and several clones: rebase, retries, conflicts."""
from __future__ import annotations

import stat
from pathlib import Path

import pygit2

from gitmem import gitio
from gitmem.publish.push import publish
from tests.support.cycle_support import clone, file_at, is_clean, origin_and_clone
from tests.support.gitcli import git as run_git
from tests.support.helpers import GitRepo


def _hook(repo: GitRepo, body: str) -> None:
    """A real pre-push hook in the clone: the way to make a push race reproducible."""
    hook = repo.path / ".git" / "hooks" / "pre-push"
    hook.parent.mkdir(parents=True, exist_ok=True)
    hook.write_text("#!/bin/sh\n" + body)
    hook.chmod(hook.stat().st_mode | stat.S_IEXEC)


def _origin_head(origin: Path, branch: str = "main") -> pygit2.Commit:
    return pygit2.Repository(str(origin)).revparse_single(f"refs/heads/{branch}").peel(pygit2.Commit)


def test_a_fast_forward_push(tmp_path: Path, memrepo: GitRepo) -> None:
    origin = origin_and_clone(tmp_path, memrepo)
    memrepo.commit_files({"a.txt": "a\n"})
    result = publish(memrepo.handle, conflict_branch="gitmem/cycle-1", sleep=lambda s: None)
    assert (result.status, result.attempts) == ("pushed", 1)
    assert str(_origin_head(origin).id) == memrepo.head() == result.commit


def test_rebases_onto_a_commit_pushed_by_someone_else(tmp_path: Path, memrepo: GitRepo) -> None:
    origin = origin_and_clone(tmp_path, memrepo)
    human = clone(origin, tmp_path / "human")
    human.commit_files({"ROADMAP.md": human.read("ROADMAP.md") + "- [ ] human idea\n"}, "human idea")
    run_git(human.path, "push", "--quiet", "origin", "main")
    mine = memrepo.commit_files({"a.txt": "a\n"}, "mine")

    result = publish(memrepo.handle, conflict_branch="gitmem/cycle-1", sleep=lambda s: None)
    assert result.status == "pushed"
    assert "rebased 1 commit(s) onto origin/main" in result.messages
    tip = _origin_head(origin)
    assert tip.message == "mine" and str(tip.id) != str(mine)
    assert tip.parents[0].message == "human idea"
    assert file_at(memrepo.repo, "HEAD", "ROADMAP.md").endswith("- [ ] human idea\n")
    assert (memrepo.path / "ROADMAP.md").read_text().endswith("- [ ] human idea\n")   # work tree moved too
    assert is_clean(memrepo)


def test_a_push_race_is_retried_with_backoff(tmp_path: Path, memrepo: GitRepo) -> None:
    origin = origin_and_clone(tmp_path, memrepo)
    human = clone(origin, tmp_path / "human")
    human.commit_files({"human.txt": "h\n"}, "human, during our push")
    # The first push attempt finds that the human pushed between our fetch and our push.
    _hook(memrepo, f"[ -e '{tmp_path}/raced' ] && exit 0\ntouch '{tmp_path}/raced'\n"
                   f"cd '{human.path}' && unset GIT_DIR GIT_WORK_TREE && git push --quiet origin main\n")
    memrepo.commit_files({"a.txt": "a\n"}, "mine")
    waits: list[float] = []
    result = publish(memrepo.handle, conflict_branch="gitmem/cycle-1", sleep=waits.append, backoff=0.5)
    assert (result.status, result.attempts, waits) == ("pushed", 2, [0.5])
    assert "rejected" in result.messages[0]
    tip = _origin_head(origin)
    assert (tip.message, tip.parents[0].message) == ("mine", "human, during our push")


def test_gives_up_after_five_tries_and_keeps_the_commit(tmp_path: Path, memrepo: GitRepo) -> None:
    origin = origin_and_clone(tmp_path, memrepo)
    before = str(_origin_head(origin).id)
    _hook(memrepo, "echo 'push blocked by policy' >&2\nexit 1\n")
    mine = str(memrepo.commit_files({"a.txt": "a\n"}, "mine"))
    waits: list[float] = []
    result = publish(memrepo.handle, conflict_branch="gitmem/cycle-1", sleep=waits.append)
    assert (result.status, result.attempts, waits) == ("failed", 5, [1.0, 2.0, 4.0, 8.0])
    assert "push blocked by policy" in result.messages[0]
    assert str(_origin_head(origin).id) == before
    assert memrepo.head() == mine == result.commit


def test_a_conflict_goes_to_a_side_branch_and_nothing_is_lost(tmp_path: Path, memrepo: GitRepo) -> None:
    origin = origin_and_clone(tmp_path, memrepo)
    human = clone(origin, tmp_path / "human")
    human.commit_files({"ROADMAP.md": "# ROADMAP\n\n## Human plan (current)\n- [ ] theirs\n"}, "theirs")
    run_git(human.path, "push", "--quiet", "origin", "main")
    mine = str(memrepo.commit_files({"ROADMAP.md": "# ROADMAP\n\n## Agent plan (current)\n- [ ] mine\n"}, "mine"))

    result = publish(memrepo.handle, conflict_branch="gitmem/cycle-7", sleep=lambda s: None)
    assert (result.status, result.side_branch, result.conflicts) == ("conflict", "gitmem/cycle-7", ("ROADMAP.md",))
    assert str(_origin_head(origin, "gitmem/cycle-7").id) == mine
    assert _origin_head(origin).message == "theirs"
    assert memrepo.head() == str(_origin_head(origin).id)      # local main follows origin again
    assert str(memrepo.repo.revparse_single("gitmem/cycle-7").id) == mine
    assert is_clean(memrepo)
    # A second conflict for the same cycle number does not overwrite the first branch.
    memrepo.commit_files({"ROADMAP.md": "# ROADMAP\n\n## Other plan (current)\n- [ ] again\n"}, "again")
    human.commit_files({"ROADMAP.md": "# ROADMAP\n\n## Human again (current)\n- [ ] x\n"}, "theirs again")
    run_git(human.path, "push", "--quiet", "origin", "main")
    second = publish(memrepo.handle, conflict_branch="gitmem/cycle-7", sleep=lambda s: None)
    assert second.side_branch == "gitmem/cycle-7-2"
    assert str(_origin_head(origin, "gitmem/cycle-7").id) == mine


def test_the_first_push_creates_the_remote_branch(tmp_path: Path, memrepo: GitRepo) -> None:
    origin = tmp_path / "empty.git"
    pygit2.init_repository(str(origin), bare=True, initial_head="main")
    memrepo.repo.remotes.create("origin", str(origin))
    result = publish(memrepo.handle, conflict_branch="gitmem/cycle-1", sleep=lambda s: None)
    assert result.status == "pushed"
    assert str(_origin_head(origin).id) == memrepo.head()


def test_no_remote_is_reported_not_raised(memrepo: GitRepo) -> None:
    result = publish(memrepo.handle, conflict_branch="gitmem/cycle-1")
    assert result.status == "no-remote" and "no remote 'origin'" in result.messages[0]


def test_rebase_keeps_authors_and_messages(tmp_path: Path, memrepo: GitRepo) -> None:
    origin = origin_and_clone(tmp_path, memrepo)
    human = clone(origin, tmp_path / "human")
    human.commit_files({"h.txt": "h\n"}, "theirs")
    run_git(human.path, "push", "--quiet", "origin", "main")
    memrepo.commit_files({"a.txt": "a\n"}, "one", author=("gitmem-agent", "agent@gitmem.invalid"))
    memrepo.commit_files({"b.txt": "b\n"}, "two")
    gitio.fetch(memrepo.handle, "origin", "main")
    result = gitio.rebase_onto(memrepo.handle, "refs/remotes/origin/main")
    assert (result.replayed, result.conflicts) == (2, ())
    tip = memrepo.repo.head.peel(pygit2.Commit)
    assert [tip.message, tip.parents[0].message, tip.parents[0].parents[0].message] == ["two", "one", "theirs"]
    assert tip.parents[0].author.email == "agent@gitmem.invalid"


def test_a_commit_whose_change_the_remote_already_holds_is_left_out_not_pushed_empty(tmp_path: Path,
                                                                                     memrepo: GitRepo) -> None:
    """Two writers made the same change: replayed onto the other's, ours would change nothing. It is left out
    (the other commit of ours stays), an empty commit made so on purpose is kept, and the output says so."""
    origin = origin_and_clone(tmp_path, memrepo)
    human = clone(origin, tmp_path / "human")
    human.commit_files({"same.txt": "same\n"}, "theirs")
    run_git(human.path, "push", "--quiet", "origin", "main")
    memrepo.commit_files({"same.txt": "same\n"}, "ours, the same change")
    run_git(memrepo.path, "commit", "--quiet", "--allow-empty", "-m", "empty on purpose")
    memrepo.commit_files({"b.txt": "b\n"}, "ours, another change")
    result = publish(memrepo.handle, conflict_branch="gitmem/cycle-1", sleep=lambda s: None)
    assert result.status == "pushed"
    assert "left out 1 commit(s) whose change origin/main already holds" in result.messages
    assert run_git(str(origin), "log", "--format=%s", "main").splitlines()[:3] == [
        "ours, another change", "empty on purpose", "theirs"]


def test_rebased_commits_that_fail_verify_are_not_pushed(tmp_path: Path, memrepo: GitRepo) -> None:
    origin = origin_and_clone(tmp_path, memrepo)
    human = clone(origin, tmp_path / "human")
    human.commit_files({"gitmem.yaml": human.read("gitmem.yaml").replace("now_block_lines: 10", "now_block_lines: 3")},
                       "tighten NOW blocks")
    run_git(human.path, "push", "--quiet", "origin", "main")
    block = "## 2026-11-30 09:00 UTC · cycle 1\n- Did: a\n  and more\n- Human: nothing\n- Next: b\n"
    mine = str(memrepo.commit_files({"NOW.md": memrepo.read("NOW.md") + "\n" + block}, "four-line block"))

    result = publish(memrepo.handle, conflict_branch="gitmem/cycle-1", sleep=lambda s: None)
    assert result.status == "conflict"
    assert any("fail `gitmem verify`" in m and "GM101" in m for m in result.messages)
    assert str(_origin_head(origin, "gitmem/cycle-1").id) == mine
    assert _origin_head(origin).message == "tighten NOW blocks"
    assert is_clean(memrepo)


def test_a_close_and_a_cycle_racing_on_log_both_land(tmp_path: Path, memrepo: GitRepo) -> None:
    origin = origin_and_clone(tmp_path, memrepo)
    closer = clone(origin, tmp_path / "closer")
    close = "\n## 2026-11-30 23:47 UTC · close\n- Report: a quiet day\n"
    closer.commit_files({"LOG.md": closer.read("LOG.md") + close}, "gitmem: close 2026-11-30",
                        author=("gitmem-agent", "agent@gitmem.invalid"))
    run_git(closer.path, "push", "--quiet", "origin", "main")
    entry = "\n## 2026-11-30 23:50 UTC · cycle 1 · built\n- Task: late work\n- Result: done\n"
    memrepo.commit_files({"LOG.md": memrepo.read("LOG.md") + entry}, "gitmem: cycle 1 · built · late work",
                         author=("gitmem-agent", "agent@gitmem.invalid"))

    result = publish(memrepo.handle, conflict_branch="gitmem/cycle-1", sleep=lambda s: None)
    assert result.status == "pushed"
    merged = file_at(pygit2.Repository(str(origin)), "refs/heads/main", "LOG.md")
    assert merged.endswith(close + entry)
