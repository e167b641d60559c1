"""The committed launcher `.gitmem/gitmem` (gitmem.sessions.launcher) run by `sh`, with real files: the repository's
`.venv` first, then PATH (absolute entries outside the work tree only), then `python3 -P -m gitmem`, else exit
127 with what to install. What the agent can plant in the work tree (`./gitmem`, a `bin/` on PATH, a `gitmem/`
package in the working directory) is never run."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gitmem.scaffold.init import init
from gitmem.sessions.launcher import LAUNCHER, launcher_command

SH = shutil.which("sh") or "/bin/sh"


def fake_gitmem(folder: Path, says: str) -> Path:
    """An executable `gitmem` that says who it is and what it was given."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "gitmem"
    script.write_text(f'#!/bin/sh\necho "{says}: $*"\n')
    script.chmod(0o755)
    return script


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("launcher") / "agent"
    assert init(root, ["claude"]).problems == []
    return root


def launch(repo: Path, path: str, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([SH, str(repo / LAUNCHER), *args], cwd=cwd or repo, env={"PATH": path},
                          capture_output=True, text=True, timeout=60)


def test_the_repositorys_venv_comes_first(repo: Path, tmp_path: Path) -> None:
    venv = fake_gitmem(repo / ".venv" / "bin", "venv").parent
    try:
        elsewhere = fake_gitmem(tmp_path / "bin", "path").parent
        done = launch(repo, str(elsewhere), "log", "add", "--task", "two words")
        assert (done.returncode, done.stdout) == (0, "venv: log add --task two words\n")
    finally:
        shutil.rmtree(venv.parent)


def test_then_path_but_never_an_entry_the_agent_can_write(repo: Path, tmp_path: Path) -> None:
    fake_gitmem(repo, "planted in the work tree")            # `./gitmem`, reached by an empty or `.` entry
    fake_gitmem(repo / "bin", "planted in bin/")             # an absolute entry inside the tree
    (tmp_path / "linked").symlink_to(repo / "bin")           # and the same, through a link from outside
    fake_gitmem(repo / "rel", "planted in rel/")              # a relative entry
    good = fake_gitmem(tmp_path / "tools", "installed").parent
    try:
        path = os.pathsep.join(["", ".", "rel", str(repo / "bin"), str(tmp_path / "linked"), str(good)])
        done = launch(repo, path, "status")
        assert (done.returncode, done.stdout) == (0, "installed: status\n"), done.stderr
    finally:
        for planted in (repo / "gitmem", repo / "bin", repo / "rel"):
            shutil.rmtree(planted) if planted.is_dir() else planted.unlink()


def test_then_python3_dash_m_without_the_working_directorys_gitmem(repo: Path, tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    tools.mkdir()
    python = tools / "python3"                               # a Python that has gitmem, no `gitmem` script beside
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    planted = repo / "gitmem"
    planted.mkdir()
    (planted / "__init__.py").write_text("")
    (planted / "__main__.py").write_text("print('planted package')\n")
    try:
        done = launch(repo, str(tools), "--version")
        assert done.returncode == 0 and done.stdout.startswith("gitmem, version "), done.stdout + done.stderr
    finally:
        shutil.rmtree(planted)


def test_neither_says_what_to_install_and_exits_127(repo: Path, tmp_path: Path) -> None:
    done = launch(repo, str(tmp_path), "hook", "stop")
    assert done.returncode == 127 and done.stdout == ""
    assert done.stderr.startswith("gitmem: not found (looked in ") and "python3 -m venv .venv && .venv/bin/pip " \
        "install 'gitmem-agent[agents] @ git+https://github.com/" in done.stderr


def test_the_config_command_finds_the_launcher_from_a_subdirectory_and_never_exits_2(repo: Path,
                                                                                     tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    tools.mkdir()
    for tool in ("git", "sh"):                                # what a host that starts `sh` has on PATH
        (tools / tool).symlink_to(shutil.which(tool) or f"/usr/bin/{tool}")
    fake_gitmem(repo / ".venv" / "bin", "venv")
    (repo / "src" / "deep").mkdir(parents=True)
    try:
        env = {"PATH": str(tools), "HOME": str(tmp_path)}
        done = subprocess.run(launcher_command("mcp"), cwd=repo / "src" / "deep", env=env, capture_output=True,
                              text=True, timeout=60)
        assert (done.returncode, done.stdout) == (0, "venv: mcp\n"), done.stderr
        outside = subprocess.run(launcher_command("hook", "stop"), cwd=tmp_path, env=env, capture_output=True,
                                 text=True, timeout=60)
        assert outside.returncode == 127, "Claude Code reads a hook's exit 2 as `block`"
        assert "no .gitmem/gitmem at the top of a git work tree here" in outside.stderr
    finally:
        shutil.rmtree(repo / ".venv")
        shutil.rmtree(repo / "src")


def test_a_work_tree_the_agent_made_inside_never_supplies_the_launcher(repo: Path, tmp_path: Path) -> None:
    """`git init sub`, or a `.git` file naming a git directory the agent made: from inside either, `git
    rev-parse --show-toplevel` names the agent's tree; the outermost work tree with a launcher wins."""
    tools = tmp_path / "tools"
    tools.mkdir()
    for tool in ("git", "sh"):
        (tools / tool).symlink_to(shutil.which(tool) or f"/usr/bin/{tool}")
    fake_gitmem(repo / ".venv" / "bin", "venv")
    nested, linked = repo / "nested", repo / "linked"
    env = {"PATH": str(tools), "HOME": str(tmp_path)}
    subprocess.run(["git", "init", "-q", str(nested)], check=True, env=env)
    subprocess.run(["git", "init", "-q", f"--separate-git-dir={repo / 'hidden.git'}", str(linked)], check=True,
                   env=env)
    assert (linked / ".git").is_file()
    try:
        for planted in (nested, linked):
            launcher = planted / LAUNCHER
            launcher.parent.mkdir(parents=True)
            launcher.write_text('echo "planted launcher: $*"\n')
            (planted / "deep").mkdir()
            done = subprocess.run(launcher_command("hook", "stop"), cwd=planted / "deep", env=env,
                                  capture_output=True, text=True, timeout=60)
            assert (done.returncode, done.stdout) == (0, "venv: hook stop\n"), done.stderr
    finally:
        for made in (nested, linked, repo / "hidden.git", repo / ".venv"):
            shutil.rmtree(made)


def test_a_linked_venv_gitmem_is_skipped_with_a_warning(repo: Path, tmp_path: Path) -> None:
    evil = fake_gitmem(tmp_path / "evil", "linked")
    (repo / ".venv" / "bin").mkdir(parents=True)
    (repo / ".venv" / "bin" / "gitmem").symlink_to(evil)
    try:
        good = fake_gitmem(tmp_path / "tools", "installed").parent
        done = launch(repo, str(good), "status")
        assert (done.returncode, done.stdout) == (0, "installed: status\n"), done.stderr
        assert done.stderr == (f"gitmem: skipped {repo.resolve()}/.venv/bin/gitmem: it is a symbolic link, not the "
                               "script pip installs\n")
    finally:
        shutil.rmtree(repo / ".venv")
