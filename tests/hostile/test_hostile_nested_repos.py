"""Hostile agents, class 3b in a repository that keeps other repositories in its work tree: a clone no config
names (`vendor/lib/.git`, untracked), and a `.git` file that leads to a git directory elsewhere in the tree.

Their git directories are in the work tree, writable by the agent with the box and without it; a human's next
`git status` or `git commit` inside one runs what its config says (`core.fsmonitor`) and its hooks. An agent that
writes a hook, a config, a config.worktree, or points the `.git` file at a git directory of its own gets each
put back when it is done (gitmem.cycle.nested_guard), its version kept aside and named in Evidence, as the
repository's own `.git` is; and the human's git there afterwards runs nothing the agent wrote. Real cycles, a
command agent doing the attack, in the real bwrap and with the sandbox off.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from gitmem.errors import ExitCode
from gitmem.gitio import nested
from tests.support.gitcli import git, run_git
from tests.support.helpers import GitRepo
from tests.support.hostile import command_agent, cycle, evidence, no_traceback
from tests.support.nobody import bwrap_works

needs_bwrap = pytest.mark.skipif(not bwrap_works([]), reason="bwrap is not installed or cannot create namespaces")
SANDBOXES = ["none", pytest.param("bubblewrap", marks=needs_bwrap)]


def _nested(memrepo: GitRepo, tmp_path: Path) -> Path:
    """`vendor/lib`, a clone of the human's kept in the tree (no submodule: nothing names it), with per-tree config
    switched on; and `tools/app`, whose `.git` file leads to a bare repository kept at `store/app.git`. All three
    ignored, as a project ignores what it keeps but does not track (a cycle starts from a clean tree)."""
    (memrepo.path / ".git" / "info" / "exclude").write_text("vendor/\nstore/\ntools/\n", encoding="utf-8")
    source = tmp_path / "lib-source"
    source.mkdir()
    git(source, "init", "-q", "-b", "main")
    (source / "code.txt").write_text("library code\n", encoding="utf-8")
    git(source, "add", "code.txt")
    git(source, "commit", "-q", "-m", "library")
    lib = memrepo.path / "vendor" / "lib"
    git(memrepo.path, "clone", "-q", str(source), str(lib))
    git(lib, "config", "extensions.worktreeConfig", "true")
    git(memrepo.path, "clone", "-q", "--bare", str(source), str(memrepo.path / "store" / "app.git"))
    app = memrepo.path / "tools" / "app"
    app.mkdir(parents=True)
    (app / ".git").write_text("gitdir: ../../store/app.git\n", encoding="utf-8")
    git(app, "config", "core.bare", "false")
    git(app, "checkout", "-q", "main", "--", ".")
    return lib


def _executable(path: str, marker: Path) -> str:
    """Agent code: an executable hook at `path` (from the tree's top) that leaves `marker` when it runs."""
    return (f"os.makedirs(os.path.dirname(os.path.join(root, {path!r})), exist_ok=True)\n"
            f"open(os.path.join(root, {path!r}), 'w').write('#!/bin/sh\\ntouch {marker}\\n')\n"
            f"os.chmod(os.path.join(root, {path!r}), 0o755)\n")


def _fsmonitor(path: str, marker: Path) -> str:
    """Agent code: `core.fsmonitor` appended to the config file at `path`: git status there runs it."""
    return f"open(os.path.join(root, {path!r}), 'a').write('[core]\\n\\tfsmonitor = \"touch {marker}; false\"\\n')\n"


def _pointer(marker: Path) -> str:
    """Agent code: a git directory of the agent's (the bare store's copy, with an fsmonitor), and `tools/app/.git`
    pointed at it."""
    return ("import shutil\n"
            "shutil.copytree(os.path.join(root, 'store', 'app.git'), os.path.join(root, 'store', 'agents.git'))\n"
            + _fsmonitor("store/agents.git/config", marker)
            + "open(os.path.join(root, 'tools', 'app', '.git'), 'w').write('gitdir: ../../store/agents.git\\n')\n")


def _commondir(marker: Path) -> str:
    """Agent code: a common directory of the agent's (a copy of the clone's git directory, with an fsmonitor),
    and a `commondir` in the clone's git directory that sends git there for its config."""
    return ("import shutil\n"
            "shutil.copytree(os.path.join(root, 'vendor', 'lib', '.git'), os.path.join(root, 'store', 'common.git'))\n"
            + _fsmonitor("store/common.git/config", marker)
            + "open(os.path.join(root, 'vendor', 'lib', '.git', 'commondir'), 'w').write("
              "os.path.join(root, 'store', 'common.git') + '\\n')\n")


ATTACKS = {     # what the agent does, where, what Evidence names, what the kept copy holds ("": the marker's path)
    "a pre-commit hook in the clone": (_executable, "vendor/lib/.git/hooks/pre-commit",
                                       "vendor/lib/.git/hooks/pre-commit (added)", ""),
    "fsmonitor in the clone's config": (_fsmonitor, "vendor/lib/.git/config", "vendor/lib/.git/config (changed)",
                                        ""),
    "fsmonitor in the clone's config.worktree": (_fsmonitor, "vendor/lib/.git/config.worktree",
                                                 "vendor/lib/.git/config.worktree (added)", ""),
    "the .git file pointed at the agent's git directory": (lambda _path, marker: _pointer(marker), "",
                                                           "tools/app/.git (changed)",
                                                           "gitdir: ../../store/agents.git"),
    "a commondir in the clone sending git to the agent's": (lambda _path, marker: _commondir(marker), "",
                                                            "vendor/lib/.git/commondir (added)", "common.git"),
}


@pytest.mark.parametrize("sandbox", SANDBOXES)
@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_nested_repositorys_git_state_the_agent_writes_is_put_back_and_runs_nothing(
        tmp_path: Path, memrepo: GitRepo, cli, sandbox: str, attack: str) -> None:
    lib = _nested(memrepo, tmp_path)
    app = memrepo.path / "tools" / "app"
    before = {path: path.read_bytes() for path in (lib / ".git" / "config", app / ".git")}
    marker = tmp_path / "agent-ran" / "marker"
    marker.parent.mkdir()
    write, path, label, aside = ATTACKS[attack]
    command_agent(tmp_path, memrepo, write(path, marker), sandbox=sandbox)

    result = cli(["cycle", "--json"], cwd=memrepo.path)

    assert result.code == ExitCode.OK, result.out + result.err
    assert no_traceback(result.err)
    assert {path: path.read_bytes() for path in before} == before
    assert not (lib / ".git" / "hooks" / "pre-commit").exists()
    assert not (lib / ".git" / "config.worktree").exists() and not (lib / ".git" / "commondir").exists()
    said = evidence(memrepo)
    assert "restored git state the agent changed" in said and label in said, said
    assert any(label in message for message in json.loads(result.out)["messages"])
    kept = list((memrepo.path / ".git" / "gitmem" / "guard" / "cycle-1").iterdir())
    assert any((aside or str(marker)) in item.read_text(encoding="utf-8") for item in kept), kept
    # The human's next look at each repository, and a commit inside the clone, run nothing the agent wrote.
    git(app, "status", "--short")
    git(lib, "status", "--short")
    (lib / "code.txt").write_text("a human's change\n", encoding="utf-8")
    git(lib, "commit", "-q", "-am", "a human's commit in the clone")
    assert not marker.exists()


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_clones_git_directory_swapped_for_a_link_to_the_agents_is_a_folder_again(
        tmp_path: Path, memrepo: GitRepo, cli, sandbox: str) -> None:
    """The agent moves the clone's `.git` aside and links a git directory of its own (its config with an
    fsmonitor) in its place: the link goes, kept aside as what it was, and the folder is made again with the
    clone's captured state; the human's git there runs nothing the agent wrote."""
    lib = _nested(memrepo, tmp_path)
    before = (lib / ".git" / "config").read_bytes()
    marker = tmp_path / "agent-ran" / "marker"
    marker.parent.mkdir()
    body = ("import shutil\n"
            "lib = os.path.join(root, 'vendor', 'lib')\n"
            "os.rename(os.path.join(lib, '.git'), os.path.join(lib, 'moved.git'))\n"
            "shutil.copytree(os.path.join(lib, 'moved.git'), os.path.join(root, 'store', 'agents.git'))\n"
            + _fsmonitor("store/agents.git/config", marker)
            + "os.symlink(os.path.join(root, 'store', 'agents.git'), os.path.join(lib, '.git'))\n")
    command_agent(tmp_path, memrepo, body, sandbox=sandbox)

    result = cli(["cycle", "--json"], cwd=memrepo.path)

    assert result.code == ExitCode.OK, result.out + result.err
    assert not (lib / ".git").is_symlink() and (lib / ".git" / "config").read_bytes() == before
    said = evidence(memrepo)
    assert "vendor/lib/.git (changed)" in said, said
    run_git(lib, "status", "--short", check=False)
    assert not marker.exists()


def test_a_walk_cut_short_by_a_big_node_modules_stops_no_cycle_and_says_what_was_not_guarded(
        memrepo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail-open, said in Evidence (gitmem.cycle.agent_guard `past_the_walk`): a project whose `node_modules`
    holds more entries than the walk looks at runs every cycle, and each one says a repository past the bound
    was neither guarded nor shown stripped."""
    (memrepo.path / ".git" / "info" / "exclude").write_text("node_modules/\n", encoding="utf-8")
    for number in range(40):
        folder = memrepo.path / "node_modules" / f"pkg{number}"
        folder.mkdir(parents=True)
        (folder / "index.js").write_bytes(b"")
    monkeypatch.setattr(nested, "MAX_WALK_ENTRIES", 50)

    for _ in range(2):          # every cycle, not the first only
        report = cycle(memrepo, lambda root, memory, request: None)
        assert report.exit_code == ExitCode.OK, report.error
        said = evidence(memrepo)
        assert "the walk for git directories in the work tree stopped at its bound (50 entries)" in said, said
        assert "neither guarded nor, in the box, shown without its credentials" in said
