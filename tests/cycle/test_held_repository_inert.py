"""A repository the agent makes in the tree is held in a form that runs nothing (gitmem.cycle.oversize `inert`),
with the real bwrap box and without it: git where the runner's note sends the human, and in the clone the note
says to make, never runs the agent's core.fsmonitor or hooks."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from gitmem.cycle.oversize import INERT_GIT
from gitmem.errors import ExitCode
from tests.support.helpers import GitRepo, make_repo
from tests.support.hostile import command_agent, evidence
from tests.support.nobody import NOBODY, bwrap_works, gitmem_as_nobody, nobody_env, nobody_place, runs_nobodys_venv

MODES = ["none", pytest.param("bubblewrap", marks=pytest.mark.skipif(
    not bwrap_works([]), reason="bwrap is not installed or cannot create namespaces here"))]


def _agent(monitor: Path) -> str:
    return f'''
sub = os.path.join(root, "vendored")
os.makedirs(sub)
run = lambda *argv: subprocess.run(["git", "-C", sub, *argv], check=True, capture_output=True)
run("init", "-q")
with open(os.path.join(sub, "f.txt"), "w") as handle:
    handle.write("the agent's project\\n")
run("add", "f.txt")
run("-c", "user.name=a", "-c", "user.email=a@b.invalid", "commit", "-qm", "its history")
run("config", "core.fsmonitor", {str(monitor)!r})
hook = os.path.join(sub, ".git", "hooks", "post-checkout")
with open(hook, "w") as handle:
    handle.write("#!/bin/sh\\n{monitor} hook\\n")
os.chmod(hook, 0o755)
'''


def _monitor(folder: Path) -> tuple[Path, Path]:
    """A script on the human's machine that leaves a mark when run: only the agent's config names it."""
    marker, monitor = folder / "agent-ran", folder / "monitor.sh"
    monitor.write_text(f"#!/bin/sh\necho \"$*\" >> {marker}\n", encoding="utf-8")
    monitor.chmod(0o755)
    return marker, monitor


@pytest.mark.parametrize("sandbox", MODES)
def test_following_the_note_runs_nothing_of_the_agents(tmp_path: Path, memrepo: GitRepo, cli, sandbox: str) -> None:
    marker, monitor = _monitor(tmp_path)
    command_agent(tmp_path, memrepo, _agent(monitor), sandbox=sandbox)
    result = cli(["cycle", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err
    assert [v["code"] for v in json.loads(result.out)["violations"]] == ["GM720"]
    _follow_the_note(memrepo, tmp_path, marker)


BY_NAME = """
for argv in (["gitmem", "log", "add", "--task", "t", "--outcome", "built", "--result", "r"],
             ["gitmem", "now", "add", "--did", "d", "--human", "nothing", "--next", "n"]):
    subprocess.run(argv, check=True, cwd=root)
"""      # the memory writes of an agent that cannot run this test's own gitmem: the one on PATH


@pytest.mark.skipif(not bwrap_works([]), reason="bwrap is not installed or cannot create namespaces here")
@pytest.mark.parametrize("bare", [False, True], ids=["a .git", "the folder is the git directory"])
def test_inside_the_box_as_an_unprivileged_user_the_held_repository_runs_nothing(git_env: None, bare: bool) -> None:
    with nobody_place("gitmem-held-") as (place, bin_dir):
        repo = make_repo(place / "repo")
        marker, monitor = _monitor(place)
        made = _bare_agent(monitor) if bare else _agent(monitor)
        command_agent(place, repo, made + BY_NAME, write_memory=False, sandbox="bubblewrap")
        runs_nobodys_venv(repo, bin_dir)
        env = nobody_env(place, bin_dir)
        done = gitmem_as_nobody(place, bin_dir, repo.path, "cycle", "--json", env=env)
        assert done.returncode == ExitCode.OK, done.stderr
        assert [v["code"] for v in json.loads(done.stdout)["violations"]] == ["GM720"]
        _follow_the_note(repo, place, marker, as_user=NOBODY, env=env)      # the human is the one who ran it


def _follow_the_note(memrepo: GitRepo, tmp_path: Path, marker: Path, *, as_user: list[str] | None = None,
                     env: dict[str, str] | None = None) -> None:
    """The note's own words: where it says the repository is, git finds nothing of the agent's; the clone it
    says to make holds the history and runs nothing either."""
    prefix = as_user or []
    note = evidence(memrepo)
    kept = re.search(r"moved to (\S+), its \.git renamed", note)
    clone = re.search(r"`git clone (\S+) <new directory>`", note)
    assert kept is not None and clone is not None, note
    place = memrepo.path / kept.group(1)
    for argv in (["status"], ["log", "-1"], ["checkout", "-q", "HEAD"]):
        subprocess.run([*prefix, "git", *argv], cwd=place, capture_output=True, env=env)
    copy = tmp_path / "look"
    subprocess.run([*prefix, "git", "clone", "-q", clone.group(1), str(copy)], cwd=memrepo.path, check=True,
                   capture_output=True, env=env)
    for argv in (["status"], ["log", "-1"], ["checkout", "-q", "HEAD"]):
        subprocess.run([*prefix, "git", *argv], cwd=copy, check=True, capture_output=True, env=env)
    assert (copy / "f.txt").read_text(encoding="utf-8") == "the agent's project\n"
    assert not marker.exists(), marker.read_text(encoding="utf-8")
    # Kept whole, config and hooks too, where no git command looks: nothing is lost.
    assert "fsmonitor" in (place / INERT_GIT / "config").read_text(encoding="utf-8")
    assert (place / INERT_GIT / "hooks" / "post-checkout").exists()


def _bare_agent(monitor: Path) -> str:
    """A repository with no `.git` at all: the folder is the git directory itself (`git init --bare`, then told
    it has a work tree), which git finds from inside the folder as it finds a `.git`."""
    return f'''
import tempfile
sub = os.path.join(root, "vendored")
work = tempfile.mkdtemp()
run = lambda *argv: subprocess.run(["git", "-c", "user.name=a", "-c", "user.email=a@b.invalid", *argv], check=True,
                                   capture_output=True)
run("init", "-q", "--bare", sub)
with open(os.path.join(work, "f.txt"), "w") as handle:
    handle.write("the agent's project\\n")
run("--git-dir", sub, "--work-tree", work, "add", "f.txt")
run("--git-dir", sub, "--work-tree", work, "commit", "-qm", "its history")
for key, value in (("core.bare", "false"), ("core.worktree", ".."), ("core.fsmonitor", {str(monitor)!r})):
    run("--git-dir", sub, "config", key, value)
hook = os.path.join(sub, "hooks", "post-checkout")
with open(hook, "w") as handle:
    handle.write("#!/bin/sh\\n{monitor} hook\\n")
os.chmod(hook, 0o755)
'''


def _cycle_holding_one(memrepo: GitRepo, cli) -> list[str]:
    """A cycle that holds one repository (GM720, exit 0); the paths its commit holds."""
    result = cli(["cycle", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err
    assert [v["code"] for v in json.loads(result.out)["violations"]] == ["GM720"]
    return subprocess.run(["git", "ls-tree", "-r", "--name-only", "HEAD"], cwd=memrepo.path, check=True,
                          capture_output=True, text=True).stdout.split()


@pytest.mark.parametrize("sandbox", MODES)
def test_a_folder_that_is_itself_a_git_directory_is_held_and_runs_nothing(tmp_path: Path, memrepo: GitRepo, cli,
                                                                          sandbox: str) -> None:
    """Committed as files, such a folder would reach the human's checkout, where `git status` inside it runs
    the agent's core.fsmonitor: it is held like a repository with a `.git`."""
    marker, monitor = _monitor(tmp_path)
    command_agent(tmp_path, memrepo, _bare_agent(monitor), sandbox=sandbox)
    committed = _cycle_holding_one(memrepo, cli)
    assert not [name for name in committed if name.startswith("vendored/")], committed
    assert not (memrepo.path / "vendored").exists()
    _follow_the_note(memrepo, tmp_path, marker)


@pytest.mark.parametrize("sandbox", MODES)
def test_a_tracked_folder_the_agent_turns_into_a_git_directory_is_held_and_its_files_come_back(
        tmp_path: Path, memrepo: GitRepo, cli, sandbox: str) -> None:
    """The same trick in a folder the start commit tracks: only a submodule of the start commit is the human's
    repository; a tracked folder that became one is held whole, and HEAD's files come back in its place."""
    marker, monitor = _monitor(tmp_path)
    memrepo.commit_files({"vendored/keep.txt": "the human's file\n"}, "a folder of the human's")
    command_agent(tmp_path, memrepo, _bare_agent(monitor), sandbox=sandbox)
    committed = _cycle_holding_one(memrepo, cli)
    assert [name for name in committed if name.startswith("vendored/")] == ["vendored/keep.txt"], committed
    assert sorted(p.name for p in (memrepo.path / "vendored").iterdir()) == ["keep.txt"]
    assert (memrepo.path / "vendored" / "keep.txt").read_text(encoding="utf-8") == "the human's file\n"
    for argv in (["status"], ["log", "-1"]):
        subprocess.run(["git", *argv], cwd=memrepo.path / "vendored", capture_output=True)
    _follow_the_note(memrepo, tmp_path, marker)
