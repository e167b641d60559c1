"""The git layer: how a repository is found, where gitmem keeps its state, and plain values out."""
from __future__ import annotations

from pathlib import Path

import pytest

from gitmem import gitio
from gitmem.checks.check_and_verify import check_worktree, verify_range
from gitmem.config import Config
from gitmem.workspace import Workspace
from tests.support.gitcli import git
from tests.support.helpers import GitRepo


def test_the_state_dir_is_per_work_tree_also_for_a_linked_worktree(memrepo: GitRepo, tmp_path: Path) -> None:
    git(memrepo.path, "worktree", "add", "-q", "-b", "side", str(tmp_path / "linked"))
    main, linked = Workspace.open(memrepo.path), Workspace.open(tmp_path / "linked")
    assert main.state_dir == memrepo.path / ".git" / "gitmem"
    assert linked.root == (tmp_path / "linked").resolve() or linked.root == tmp_path / "linked"
    assert linked.state_dir is not None and linked.state_dir != main.state_dir
    assert linked.state_dir.parent.parent == memrepo.path / ".git" / "worktrees"
    assert Workspace.at(tmp_path / "linked").state_dir == linked.state_dir
    assert check_worktree(linked) == []


def test_git_dir_and_git_work_tree_are_honoured(memrepo: GitRepo, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.setenv("GIT_DIR", str(memrepo.path / ".git"))
    monkeypatch.setenv("GIT_WORK_TREE", str(memrepo.path))
    ws = Workspace.open()
    assert Path(ws.root).resolve() == memrepo.path.resolve()
    assert gitio.head_id(ws.repo) == memrepo.head()


def test_outside_a_repository_is_a_clear_error(tmp_path: Path, git_env: None) -> None:
    with pytest.raises(gitio.RepoError, match="not inside a git repository; run `git init` first"):
        Workspace.open(tmp_path)


def test_a_bare_repository_has_history_only(memrepo: GitRepo, tmp_path: Path) -> None:
    git(tmp_path, "clone", "-q", "--bare", str(memrepo.path), str(tmp_path / "bare.git"))
    bare = Workspace.for_repo(gitio.open_repo(tmp_path / "bare.git"), Config())
    assert gitio.work_tree(bare.repo) is None
    assert verify_range(bare, None, "HEAD").violations == []
    with pytest.raises(gitio.RepoError, match="bare repository"):
        gitio.root(bare.repo)


def test_history_comes_out_as_plain_values(memrepo: GitRepo) -> None:
    head = memrepo.head()
    commit = gitio.commit(memrepo.handle, "HEAD")
    assert (commit.id, commit.parents, commit.subject) == (head, (), "start from the gitmem template")
    assert commit.author == gitio.Identity("Ada Human", "ada@example.com")
    assert [c.id for c in gitio.walk_range(memrepo.handle, None, "HEAD")] == [head]
    assert gitio.file_at(memrepo.handle, head, "LOG.md") == (memrepo.path / "LOG.md").read_bytes()
    assert gitio.file_at(memrepo.handle, head, "nope.md") is None
    with pytest.raises(gitio.RepoError, match="unknown revision 'nope'"):
        gitio.resolve_revision(memrepo.handle, "nope")


def test_every_public_name_of_the_git_layer_resolves() -> None:
    assert all(getattr(gitio, name) is not None for name in gitio.__all__)
    with pytest.raises(AttributeError):
        gitio.no_such_thing  # noqa: B018


def test_a_blob_is_read_whole_loose_or_packed_and_nothing_else_passes_for_one(memrepo: GitRepo) -> None:
    """`gitio.blob` reads a blob's bytes from the object database, as a loose object and after `git gc` packed
    it; an id of a tree or a commit is refused, not read as if it were a file."""
    data = "# LESSONS\n\n" + "".join(f"## L-{n:04d} · lesson {n}\n- Status: open\n\n" for n in range(1, 300))
    memrepo.commit_files({"LESSONS.md": data}, "lessons")
    ws = memrepo.ws()
    head = gitio.head_id(ws.repo)
    assert head is not None
    blob_id = gitio.file_id_at(ws.repo, head, "LESSONS.md")
    assert blob_id is not None
    assert gitio.blob(ws.repo, blob_id) == data.encode()
    git(memrepo.path, "gc", "-q")
    assert gitio.blob(memrepo.ws().repo, blob_id) == data.encode()
    tree = str(memrepo.repo.revparse_single(head + "^{tree}").id)
    for other in (head, tree):
        with pytest.raises(ValueError, match="is not a blob"):
            gitio.blob(ws.repo, other)


def test_a_branch_moves_only_from_the_tip_expected_and_the_checkout_follows_only_on_it(memrepo: GitRepo) -> None:
    """`move_branch` is a compare-and-swap on the ref: a branch someone moved is left as they left it; the index and
    work tree follow while HEAD is on the branch (as `git switch` carries them), and stay alone when it is not."""
    start = memrepo.head()
    memrepo.commit_files({"new.txt": "new\n"}, "new")
    newer = memrepo.head()
    with pytest.raises(gitio.RepoError, match="main moved while gitmem worked on it"):
        gitio.move_branch(memrepo.handle, "main", start, expected=str(start))
    assert memrepo.head() == newer
    assert gitio.move_branch(memrepo.handle, "main", start, expected=newer) is True
    assert memrepo.head() == start and not (memrepo.path / "new.txt").exists()
    assert git(memrepo.path, "status", "--porcelain") == ""
    git(memrepo.path, "switch", "--quiet", "-c", "feature")
    (memrepo.path / "staged.txt").write_text("staged\n")
    git(memrepo.path, "add", "staged.txt")
    assert gitio.move_branch(memrepo.handle, "main", newer, expected=start) is False
    assert git(memrepo.path, "rev-parse", "main").strip() == newer
    assert git(memrepo.path, "rev-parse", "feature").strip() == start
    assert git(memrepo.path, "status", "--porcelain").splitlines() == ["A  staged.txt"]
