"""A copy of the index that takes chosen tracked files as unchanged (gitmem.gitio.index_view): which files
qualify, what the copy says to git, and that writing it runs nothing the repository's config names."""
from __future__ import annotations

import os
from pathlib import Path

from gitmem import gitio
from tests.support.gitcli import git, isolated_env, run_git
from tests.support.helpers import GitRepo

# A tracked file .git/config includes, written by the agent: a hook folder and a file system monitor of its own.
HOSTILE = "[core]\n\thooksPath = hooks\n\tfsmonitor = ./fsmonitor.sh\n"
MARKER = "#!/bin/sh\ntouch \"$(dirname \"$0\")/../ran-{name}\"\n"


def _hostile_settings(memrepo: GitRepo) -> None:
    memrepo.commit_files({".gitconfig.shared": HOSTILE, "hooks/post-index-change": MARKER.format(name="hook"),
                          "fsmonitor.sh": MARKER.format(name="fsmonitor").replace("/..", "")}, "settings")
    for name in ("hooks/post-index-change", "fsmonitor.sh"):
        os.chmod(memrepo.path / name, 0o755)
    git(memrepo.path, "config", "include.path", "../.gitconfig.shared")


def test_the_copy_takes_the_files_as_unchanged_and_runs_nothing_the_config_names(memrepo: GitRepo,
                                                                                 tmp_path: Path) -> None:
    _hostile_settings(memrepo)
    (memrepo.path / "NOW.md").write_text("changed\n", encoding="utf-8")
    (memrepo.path / "new.txt").write_text("untracked\n", encoding="utf-8")
    repo = memrepo.ws().repo
    top = os.path.realpath(memrepo.path)
    asked = [os.path.join(top, name) for name in (".gitconfig.shared", "NOW.md", "new.txt", ".git/config")]
    # only the tracked file as the index has it: not the changed one, the untracked one, or the git directory's
    assert gitio.unchanged_tracked(repo, asked) == [".gitconfig.shared"]
    index = memrepo.path / ".git" / "index"
    before = index.read_bytes()
    data = gitio.index_assuming_unchanged(repo, [".gitconfig.shared"])
    assert data is not None and index.read_bytes() == before
    assert [path.name for path in memrepo.path.glob("ran-*")] == []
    copy = tmp_path / "index"
    copy.write_bytes(data)
    listed = run_git(memrepo.path, "ls-files", "-v", env={**isolated_env(), "GIT_INDEX_FILE": str(copy)}).stdout
    assert "h .gitconfig.shared\n" in listed and "H NOW.md\n" in listed
    assert git(memrepo.path, "ls-files", "-v").count("h ") == 0          # the human's index is as it was
    # what the same command would have run against the repository's own git directory
    (tmp_path / "other-index").write_bytes(before)
    run_git(memrepo.path, "update-index", "--assume-unchanged", "--", ".gitconfig.shared",
            env={**isolated_env(), "GIT_INDEX_FILE": str(tmp_path / "other-index")})
    assert (memrepo.path / "ran-hook").exists()


def test_a_split_index_gets_no_copy(memrepo: GitRepo) -> None:
    """A split index keeps its other half in the git directory, which the copy's scratch git never reads: no
    copy, rather than one written there."""
    memrepo.commit_files({".gitconfig.shared": "[alias]\n\tx = log\n"}, "settings")
    git(memrepo.path, "update-index", "--split-index")
    listing = sorted(path.name for path in (memrepo.path / ".git").iterdir())
    assert any(name.startswith("sharedindex.") for name in listing)
    assert gitio.index_assuming_unchanged(memrepo.ws().repo, [".gitconfig.shared"]) is None
    assert sorted(path.name for path in (memrepo.path / ".git").iterdir()) == listing
