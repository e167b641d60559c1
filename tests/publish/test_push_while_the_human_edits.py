"""A human who edits this checkout while a push replays (a close's push runs outside the cycle's lock; seconds on a
long history) keeps the edit: the branch moves to the replayed commits, and the index and work tree follow it as
`git switch` carries a checkout. Where the move would have to overwrite the edit, nothing moves and the push says
so: the work stays on the local branch, the edit in the work tree. Before, the move checked the target out by force
(as `reset --hard` does) and the edit was gone. The moment is made exact by wrapping the real `replay`; real clones
of a bare origin, no git call faked."""
from __future__ import annotations

from pathlib import Path

import pytest

from gitmem import gitio
from gitmem.publish.push import publish
from tests.support.cycle_support import clone, origin_and_clone
from tests.support.gitcli import git as run_git
from tests.support.helpers import GitRepo

EDIT = "the human's edit, not committed\n"


def git(path: Path, *args: str) -> str:
    return run_git(path, *args).strip()


def _edits_mid_replay(monkeypatch: pytest.MonkeyPatch, repo: GitRepo, edits: dict[str, str]) -> None:
    """Wrap the real `replay` so that, right after it made the rebased commits (before the branch moves), the human
    writes `edits` into `repo`'s work tree, once."""
    from gitmem.gitio import rebase

    real = rebase.replay
    done: list[bool] = []

    def and_the_human_edits(*args: object, **kwargs: object) -> object:
        replayed = real(*args, **kwargs)        # type: ignore[arg-type]
        if not done:
            for rel, text in edits.items():
                (repo.path / rel).write_text(text)
            done.append(True)
        return replayed

    monkeypatch.setattr(rebase, "replay", and_the_human_edits)


def _ahead_and_behind(tmp_path: Path, runner: GitRepo, theirs: dict[str, str]) -> Path:
    """origin made of the runner (holding notes.txt), a commit of the runner's own, and another clone's commit of
    `theirs` pushed to origin meanwhile: the runner's push must replay."""
    runner.commit_files({"notes.txt": "notes\n", "shared.txt": "shared\n"}, "start")
    origin = origin_and_clone(tmp_path, runner)
    runner.commit_files({"mine.txt": "mine\n"}, "mine")
    other = clone(origin, tmp_path / "other")
    other.commit_files(theirs, "another clone's commit")
    git(other.path, "push", "--quiet", "origin", "main")
    return origin


def test_an_edit_the_replay_does_not_touch_survives_the_push(
        tmp_path: Path, memrepo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    origin = _ahead_and_behind(tmp_path, memrepo, {"other.txt": "from another clone\n"})
    _edits_mid_replay(monkeypatch, memrepo, {"notes.txt": EDIT, "untracked.txt": EDIT})
    result = publish(memrepo.handle, conflict_branch="gitmem/cycle-1", sleep=lambda s: None)
    assert result.status == "pushed", result
    assert git(origin, "log", "--format=%s", "-2", "main").splitlines() == ["mine", "another clone's commit"]
    assert (memrepo.path / "notes.txt").read_text() == EDIT
    assert (memrepo.path / "untracked.txt").read_text() == EDIT
    assert (memrepo.path / "other.txt").read_text() == "from another clone\n"
    assert run_git(memrepo.path, "status", "--porcelain").splitlines() == [" M notes.txt", "?? untracked.txt"]


@pytest.mark.parametrize("in_the_way", ["shared.txt", "other.txt"], ids=["edited", "untracked"])
def test_an_edit_the_move_would_overwrite_stops_the_push_and_stays(
        tmp_path: Path, memrepo: GitRepo, monkeypatch: pytest.MonkeyPatch, in_the_way: str) -> None:
    """The other clone changed shared.txt and made other.txt; the human edits shared.txt (or writes an untracked
    other.txt) meanwhile: checking the replayed commits out would overwrite it."""
    origin = _ahead_and_behind(tmp_path, memrepo, {"shared.txt": "changed over there\n",
                                                   "other.txt": "from another clone\n"})
    before = git(memrepo.path, "rev-parse", "main")
    on_origin = git(origin, "rev-parse", "main")
    _edits_mid_replay(monkeypatch, memrepo, {in_the_way: EDIT})
    result = publish(memrepo.handle, conflict_branch="gitmem/cycle-1", sleep=lambda s: None)
    assert result.status == "failed", result
    said = "\n".join(result.messages)
    assert f"would overwrite what the work tree holds uncommitted ({in_the_way})" in said, said
    assert "NOTHING REACHED ORIGIN" in said and "commit or stash it" in said
    assert (memrepo.path / in_the_way).read_text() == EDIT
    assert git(memrepo.path, "rev-parse", "main") == before == result.commit
    assert git(origin, "rev-parse", "main") == on_origin


def test_move_branch_carries_the_checkout_and_refuses_to_overwrite_it(memrepo: GitRepo) -> None:
    memrepo.commit_files({"a.txt": "a\n", "b.txt": "b\n"}, "one")
    start = memrepo.head()
    memrepo.commit_files({"b.txt": "b, later\n", "c.txt": "c\n"}, "two")
    later = memrepo.head()
    git(memrepo.path, "reset", "--quiet", "--hard", start)
    (memrepo.path / "a.txt").write_text(EDIT)
    (memrepo.path / "staged.txt").write_text(EDIT)
    git(memrepo.path, "add", "staged.txt")
    assert gitio.move_branch(memrepo.handle, "main", later, expected=start) is True
    assert memrepo.head() == later and (memrepo.path / "c.txt").read_text() == "c\n"
    assert run_git(memrepo.path, "status", "--porcelain").splitlines() == [" M a.txt", "A  staged.txt"]
    (memrepo.path / "b.txt").write_text(EDIT)
    with pytest.raises(gitio.BranchNotMoved, match=r"would overwrite .* \(b\.txt\)"):
        gitio.move_branch(memrepo.handle, "main", start, expected=later)
    assert memrepo.head() == later and (memrepo.path / "b.txt").read_text() == EDIT
    assert (memrepo.path / "a.txt").read_text() == EDIT


def test_a_staged_change_the_move_would_overwrite_stops_it(memrepo: GitRepo) -> None:
    """libgit2's SAFE checkout looks at the work tree only: a change staged and then undone in the work tree (`git
    add a.txt; git restore a.txt`) would be overwritten by a move that changes a.txt. `git switch` refuses; so
    does the move."""
    memrepo.commit_files({"a.txt": "a\n"}, "one")
    start = memrepo.head()
    memrepo.commit_files({"a.txt": "a, later\n"}, "two")
    later = memrepo.head()
    git(memrepo.path, "reset", "--quiet", "--hard", start)
    (memrepo.path / "a.txt").write_text(EDIT)
    git(memrepo.path, "add", "a.txt")
    git(memrepo.path, "restore", "a.txt")
    with pytest.raises(gitio.BranchNotMoved, match=r"would overwrite what the work tree holds staged \(a\.txt\)"):
        gitio.move_branch(memrepo.handle, "main", later, expected=start)
    assert memrepo.head() == start
    assert git(memrepo.path, "show", ":a.txt") == EDIT.strip()


def test_replayed_commits_that_fail_verify_never_move_the_branch_and_an_edit_stays(
        tmp_path: Path, memrepo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    """The replay is judged before the branch moves (a NOW block over the limit another clone set): the work goes to
    a side branch as it was, and local main, which the human's edit keeps from moving to origin's tip, still holds
    it. Before, the branch moved onto the replayed commits, was moved back, and a refused move-back left the
    replayed commits on the branch and diverted them instead."""
    origin = origin_and_clone(tmp_path, memrepo)
    human = clone(origin, tmp_path / "human")
    human.commit_files({"gitmem.yaml": human.read("gitmem.yaml").replace("now_block_lines: 10", "now_block_lines: 3")},
                       "tighten NOW blocks")
    git(human.path, "push", "--quiet", "origin", "main")
    block = "## 2026-11-30 09:00 UTC · cycle 1\n- Did: a\n  and more\n- Human: nothing\n- Next: b\n"
    mine = str(memrepo.commit_files({"NOW.md": memrepo.read("NOW.md") + "\n" + block}, "four-line block"))
    edited = memrepo.read("gitmem.yaml") + "# the human's note, not committed\n"
    _edits_mid_replay(monkeypatch, memrepo, {"gitmem.yaml": edited})
    result = publish(memrepo.handle, conflict_branch="gitmem/cycle-1", sleep=lambda s: None)
    assert result.status == "conflict", result
    said = "\n".join(result.messages)
    assert "fail `gitmem verify`" in said and "local main holds it too" in said, said
    assert git(origin, "rev-parse", "gitmem/cycle-1") == mine
    assert git(memrepo.path, "rev-parse", "main") == mine
    assert memrepo.read("gitmem.yaml") == edited


def test_a_commit_put_on_the_branch_after_the_rebase_is_not_published_unchecked(
        tmp_path: Path, memrepo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another process commits on the branch between the rebase's move and the push (the real push, called right
    after): the push publishes the commit it rebased and checked, by id, and the later commit stays on the branch
    for the next push. Before, the branch was pushed by name and took the unchecked commit along."""
    origin = _ahead_and_behind(tmp_path, memrepo, {"other.txt": "from another clone\n"})
    real = gitio.push
    late: list[str] = []

    def and_a_commit_lands_first(repo: object, remote: str, source: str, branch: str) -> None:
        if not late:
            tree = git(memrepo.path, "rev-parse", "main^{tree}")
            late.append(git(memrepo.path, "commit-tree", tree, "-p", "main", "-m", "landed during the push"))
            git(memrepo.path, "update-ref", "refs/heads/main", late[0])
        real(repo, remote, source, branch)      # type: ignore[arg-type]

    monkeypatch.setattr(gitio, "push", and_a_commit_lands_first)
    result = publish(memrepo.handle, conflict_branch="gitmem/cycle-1", sleep=lambda s: None)
    assert result.status == "pushed" and late, result
    assert git(origin, "log", "--format=%s", "-2", "main").splitlines() == ["mine", "another clone's commit"]
    assert result.commit == git(origin, "rev-parse", "main")
    assert git(memrepo.path, "rev-parse", "main") == late[0]
