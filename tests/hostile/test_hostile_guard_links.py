"""Hostile agents, class 3b: a link in the middle of a path of git state is never followed by the guard.

The guard puts back the git state it captured (gitmem.cycle.gitstate). An agent with a shell can move a folder
on such a path (`.git/modules`, `.git/worktrees`, `.git/objects/info`) elsewhere and put a symlink in its place,
then change what the link leads to. The restore must not write through that link: what lies outside the git
directory is never written, the planted link is taken away (named in Evidence), and the folder is a real one
again with the captured state in it. The real runner runs a `command` agent, without the box.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from gitmem.errors import ExitCode
from tests.support.gitcli import git
from tests.support.helpers import GitRepo
from tests.support.hostile import add_submodule, command_agent, evidence, no_traceback


def _with_work_tree(repo: GitRepo, tmp_path: Path) -> None:
    git(repo.path, "worktree", "add", "-q", str(tmp_path / "feature"), "-b", "feature")


def _move_and_link(folder: str, then: str) -> str:
    """The agent's script: move `.git/<folder>` out of the git directory, link it back, then run `then` (with
    `moved`, the folder's new place)."""
    return ("import shutil\n"
            f"inside = os.path.join(root, '.git', {folder!r})\n"
            "moved = os.environ['HOSTILE_OUT']\n"
            "shutil.move(inside, moved)\n"
            "os.symlink(moved, inside)\n" + then)


# name -> (setup, the folder moved, what the agent does through the link, a captured file under the folder)
CASES: dict[str, tuple[Callable[[GitRepo, Path], None], str, str, str]] = {
    ".git/modules": (add_submodule, "modules",
                     "open(os.path.join(moved, 'lib/sub/config'), 'a').write('[core]\\n\\tfsmonitor = agent\\n')\n"
                     "open(os.path.join(moved, 'lib/sub/hooks/pre-commit'), 'w').write('#!/bin/sh\\n')\n",
                     "lib/sub/config"),
    ".git/worktrees": (_with_work_tree, "worktrees",
                       "open(os.path.join(moved, 'feature/commondir'), 'w').write('/elsewhere\\n')\n"
                       "os.makedirs(os.path.join(moved, 'feature/info'), exist_ok=True)\n"
                       "open(os.path.join(moved, 'feature/info/exclude'), 'w').write('*\\n')\n",
                       "feature/commondir"),
    ".git/objects/info": (lambda repo, tmp: None, "objects/info",
                          "open(os.path.join(moved, 'alternates'), 'w').write('# the agent\\n')\n",
                          ""),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_folder_of_git_state_the_agent_replaced_with_a_link_is_put_back_and_nothing_is_written_through(
        tmp_path: Path, memrepo: GitRepo, cli, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    setup, folder, then, captured = CASES[name]
    setup(memrepo, tmp_path)
    inside = memrepo.path / ".git" / folder
    before = (inside / captured).read_bytes() if captured else None
    moved = tmp_path / "moved-out"
    monkeypatch.setenv("HOSTILE_OUT", str(moved))
    command_agent(tmp_path, memrepo, _move_and_link(folder, then), pass_env=("HOSTILE_OUT",))

    result = cli(["cycle", "--json"], cwd=memrepo.path)

    assert result.code == ExitCode.OK, result.err + result.out
    assert no_traceback(result.err)
    # The link led to the very folder the agent moved out: it is moved back whole (a submodule's objects and
    # references with it), and what the agent changed in it is put back.
    assert not os.path.lexists(moved)
    assert not inside.is_symlink() and inside.is_dir()
    if before is not None:
        assert (inside / captured).read_bytes() == before
    assert not (inside / "lib" / "sub" / "hooks" / "pre-commit").exists()
    assert not (inside / "alternates").exists() and not (inside / "feature" / "info" / "exclude").exists()
    said = evidence(memrepo)
    assert "restored git state the agent changed" in said and f"{name} (changed)" in said
    git(memrepo.path, "status", "--short")
    if name == ".git/modules":
        assert git(memrepo.path / "lib" / "sub", "log", "--format=%s") == "library\n"


def test_a_link_planted_in_the_middle_of_a_path_never_lets_the_restore_remove_an_outside_file(
        tmp_path: Path, memrepo: GitRepo, cli, monkeypatch: pytest.MonkeyPatch) -> None:
    """`.git/objects/info` linked at a folder of the human's that holds a file named like captured state: the
    restore saw it as added state and removed it through the link."""
    victim = tmp_path / "humans-folder"
    victim.mkdir()
    (victim / "alternates").write_text("# the human's own file\n", encoding="utf-8")
    (victim / "commit-graph").write_text("the human's own file\n", encoding="utf-8")
    monkeypatch.setenv("HOSTILE_OUT", str(victim))
    command_agent(tmp_path, memrepo, "import shutil\n"
                  "inside = os.path.join(root, '.git', 'objects', 'info')\n"
                  "shutil.move(inside, inside + '.gone')\n"
                  "os.symlink(os.environ['HOSTILE_OUT'], inside)\n", pass_env=("HOSTILE_OUT",))

    result = cli(["cycle", "--json"], cwd=memrepo.path)

    assert result.code == ExitCode.OK, result.err + result.out
    assert (victim / "alternates").read_text(encoding="utf-8") == "# the human's own file\n"
    assert (victim / "commit-graph").read_text(encoding="utf-8") == "the human's own file\n"
    assert sorted(os.listdir(victim)) == ["alternates", "commit-graph"]
    info = memrepo.path / ".git" / "objects" / "info"
    assert not info.is_symlink() and info.is_dir()
    assert ".git/objects/info (changed)" in evidence(memrepo)


@pytest.mark.parametrize("folder", ["hooks", "info"])
def test_a_captured_folder_the_agent_moved_out_and_linked_is_a_folder_again_and_the_outside_is_left_as_it_is(
        tmp_path: Path, memrepo: GitRepo, cli, monkeypatch: pytest.MonkeyPatch, folder: str) -> None:
    """`.git/hooks` and `.git/info` are captured places themselves: the link is removed as a link, the folder
    made again as captured, and what the agent wrote out there is left to it."""
    inside = memrepo.path / ".git" / folder
    before = {p.name: p.read_bytes() for p in inside.iterdir() if p.is_file()}
    moved = tmp_path / "moved-out"
    monkeypatch.setenv("HOSTILE_OUT", str(moved))
    command_agent(tmp_path, memrepo, _move_and_link(
        folder, "open(os.path.join(moved, 'planted'), 'w').write('#!/bin/sh\\ntouch /tmp/never\\n')\n"),
        pass_env=("HOSTILE_OUT",))

    result = cli(["cycle", "--json"], cwd=memrepo.path)

    assert result.code == ExitCode.OK, result.err + result.out
    assert no_traceback(result.err)
    assert (moved / "planted").read_text(encoding="utf-8") == "#!/bin/sh\ntouch /tmp/never\n"
    assert not inside.is_symlink() and inside.is_dir()
    assert {p.name: p.read_bytes() for p in inside.iterdir() if p.is_file()} == before
    assert f".git/{folder} (changed)" in evidence(memrepo)
