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
