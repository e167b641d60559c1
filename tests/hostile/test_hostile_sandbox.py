"""Hostile input: an agent in the bubblewrap box, run for real through the cycle runner with the `command`
backend, as root and as an unprivileged user. What it tries, and what holds:

- reading a withheld secret from /proc/1, /proc/$PPID and every /proc/*/environ: its own PID namespace shows
  no runner process, and its environment is an allow-list;
- deleting the human's unpushed branch, expiring the reflog, `git gc --prune=now`, writing .git/config or a
  hook: `.git` is read-only, so the branch and its commit survive;
- reading a path outside the tree, pushing to a local bare origin: neither is visible;
- writing memory with `gitmem log add` found on PATH works (`.git/gitmem` is writable, the venv is bound).
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from gitmem.agents.sandbox import SandboxChoice, choose
from gitmem.agents.tools import Toolbox
from gitmem.config import parse_config
from gitmem.errors import ExitCode
from tests.support.gitcli import git
from tests.support.helpers import GitRepo, make_repo
from tests.support.hostile import command_agent, evidence, no_traceback
from tests.support.nobody import bwrap_works, gitmem_as_nobody, nobody_env, nobody_place, runs_nobodys_venv

WITHHELD = "withheld-" + "Zq9x" * 6            # a secret in the runner's environment, not in agent.pass_env
PLAIN = "plain-setting-" + "k4" * 6            # an ordinary variable, outside the allow-list
VENV_BIN = str(Path(sys.executable).parent)


needs_bwrap = pytest.mark.skipif(not bwrap_works([]), reason="bwrap is not installed or cannot create namespaces "
                                                             "here (.ci/run installs bubblewrap)")

# The attack. Every result is a fact about what happened, never a value it found (the runner would mask that).
ATTACK = r'''
import glob, json
outside, origin = OUTSIDE, ORIGIN
said = {}
def run(*argv):
    done = subprocess.run(argv, cwd=root, capture_output=True, text=True)
    return done.returncode
def found_in(path):
    try:
        data = open(path, 'rb').read()
    except OSError:
        return False
    return WITHHELD.encode() in data or PLAIN.encode() in data
said["environ_hits"] = [p for p in ["/proc/1/environ", f"/proc/{os.getppid()}/environ",
                                    *glob.glob("/proc/*/environ")] if found_in(p)]
said["own_env"] = WITHHELD in json.dumps(dict(os.environ)) or PLAIN in json.dumps(dict(os.environ))
said["pids"] = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
said["branch_delete"] = run("git", "branch", "-D", "human")
said["reflog_expire"] = run("git", "reflog", "expire", "--expire=now", "--all")
said["gc"] = run("git", "gc", "--prune=now")
said["push"] = run("git", "push", "origin", "HEAD:refs/heads/evil")
for name, rel in (("config", ".git/config"), ("hook", ".git/hooks/pre-commit"), ("ref", ".git/refs/heads/evil")):
    try:
        with open(os.path.join(root, rel), "a") as handle:
            handle.write("\n# the agent was here\n")
        said[name] = "written"
    except OSError as err:
        said[name] = err.strerror
said["outside_visible"] = os.path.exists(outside)
said["origin_visible"] = os.path.exists(origin)
said["home"] = os.environ.get("HOME")
with open(os.path.join(root, "attack.json"), "w") as handle:
    json.dump(said, handle)
for argv in (["gitmem", "log", "add", "--task", "attack", "--outcome", "built", "--result", "r"],
             ["gitmem", "now", "add", "--did", "d", "--human", "nothing", "--next", "n"]):
    subprocess.run(argv, check=True, cwd=root)
'''.replace("WITHHELD", repr(WITHHELD)).replace("PLAIN", repr(PLAIN))


def _attack(outside: Path, origin: Path) -> str:
    """The attack's source; the paths are in it, not on its command line (named files are bound read-only)."""
    return ATTACK.replace("OUTSIDE", repr(str(outside))).replace("ORIGIN", repr(str(origin)))


def _stage(repo: GitRepo, place: Path) -> tuple[Path, Path, str]:
    """A human's unpushed branch, a local bare origin, a private file outside the tree; (outside, origin, tip)."""
    git(repo.path, "switch", "-q", "-c", "human")
    repo.commit_files({"notes.md": "the human's unpushed work\n"}, "human work")
    tip = repo.head()
    git(repo.path, "switch", "-q", "main")
    origin = place / "origin.git"
    git(place, "init", "-q", "--bare", str(origin))
    git(repo.path, "remote", "add", "origin", str(origin))
    outside = place / "private" / "secret.txt"
    outside.parent.mkdir()
    outside.write_text("the human's private file\n", encoding="utf-8")
    return outside, origin, tip


def _assert_held(repo_path: Path, said: dict, tip: str, origin: Path, before: dict[str, bytes]) -> None:
    assert said["environ_hits"] == [] and said["own_env"] is False, said
    assert said["pids"][0] == 1 and len(said["pids"]) < 10, said       # its own PID namespace
    for attempt in ("branch_delete", "reflog_expire", "gc", "push"):
        assert said[attempt] != 0, (attempt, said)
    assert said["config"] == said["hook"] == said["ref"] == "Read-only file system", said
    assert said["outside_visible"] is False and said["origin_visible"] is False, said
    assert said["home"] != os.environ.get("HOME")
    assert _git(repo_path, "rev-parse", "refs/heads/human").strip() == tip
    assert _git(repo_path, "cat-file", "-t", tip).strip() == "commit"
    assert _git(repo_path, "reflog", "show", "human", "--format=%H").split()[0] == tip
    assert "evil" not in _git(origin, "for-each-ref")
    for rel, data in before.items():
        assert (repo_path / rel).read_bytes() == data, rel


def _git(path: Path, *args: str) -> str:
    """git as the test (root may look at `nobody`'s repository)."""
    return git(path, "-c", "safe.directory=*", *args)


def _git_files(path: Path) -> dict[str, bytes]:
    return {rel: (path / rel).read_bytes() for rel in (".git/config", ".git/packed-refs", ".git/refs/heads/human")
            if (path / rel).exists()}


@needs_bwrap
def test_the_attacks_fail_inside_the_sandbox_and_memory_is_still_written(tmp_path: Path, memrepo: GitRepo, cli,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    place = tmp_path / "elsewhere"
    place.mkdir()
    outside, origin, tip = _stage(memrepo, place)
    monkeypatch.setenv("DEPLOY_SECRET", WITHHELD)
    monkeypatch.setenv("MY_SETTING", PLAIN)
    monkeypatch.setenv("PATH", f"{VENV_BIN}{os.pathsep}{os.environ['PATH']}")    # `gitmem` by name
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    command_agent(tmp_path, memrepo, _attack(outside, origin), write_memory=False, sandbox="bubblewrap")
    before = _git_files(memrepo.path)
    result = cli(["cycle", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err
    assert no_traceback(result.err)
    said = json.loads(memrepo.read("attack.json"))
    _assert_held(memrepo.path, said, tip, origin, before)
    assert "sandbox: bubblewrap" in evidence(memrepo)
    assert "Task: attack" in memrepo.read("LOG.md")


@needs_bwrap
def test_the_attacks_fail_for_an_unprivileged_user_too(git_env: None) -> None:
    """As root the box proves little about a runner: run the cycle as `nobody`, in a repository it owns."""
    with nobody_place("gitmem-nobody-") as (place, bin_dir):
        repo = make_repo(place / "repo")
        outside, origin, tip = _stage(repo, place)
        command_agent(place, repo, _attack(outside, origin), write_memory=False, sandbox="bubblewrap")
        runs_nobodys_venv(repo, bin_dir)
        before = _git_files(repo.path)
        env = nobody_env(place, bin_dir, DEPLOY_SECRET=WITHHELD, MY_SETTING=PLAIN)
        done = gitmem_as_nobody(place, bin_dir, repo.path, "cycle", "--json", env=env)
        assert done.returncode == ExitCode.OK, done.stderr
        assert no_traceback(done.stderr)
        said = json.loads((repo.path / "attack.json").read_text())
        _assert_held(repo.path, said, tip, origin, before)
        assert "sandbox: bubblewrap" in evidence(repo)
        assert os.stat(repo.path / "LOG.md").st_uid == 65534


def test_bubblewrap_without_bwrap_refuses_the_cycle_with_the_install_line(tmp_path: Path, memrepo: GitRepo, cli,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    command_agent(tmp_path, memrepo, "", sandbox="bubblewrap")
    monkeypatch.setenv("PATH", str(_path_without_bwrap(tmp_path)))
    head = memrepo.head()
    result = cli(["cycle"], cwd=memrepo.path)
    assert result.code == ExitCode.DIRTY, result.err
    assert "sudo apt-get install bubblewrap" in result.err and "GM707" not in result.out
    assert no_traceback(result.err)
    assert memrepo.head() == head
    json_result = cli(["cycle", "--json"], cwd=memrepo.path)
    assert json_result.code == ExitCode.DIRTY and "GM707" in json_result.out


def test_auto_without_bwrap_runs_unsandboxed_and_says_so_in_evidence(tmp_path: Path, memrepo: GitRepo, cli,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    seen = tmp_path / "seen.txt"            # outside the tree: only a plain process can write it
    command_agent(tmp_path, memrepo, f"open({str(seen)!r}, 'w').write('unconfined')", sandbox="auto")
    monkeypatch.setenv("PATH", str(_path_without_bwrap(tmp_path)))
    result = cli(["cycle"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err
    assert seen.read_text() == "unconfined"
    said = evidence(memrepo)
    assert "sandbox: none (agent.sandbox: auto, and bwrap is not on PATH" in said
    assert "sudo apt-get install bubblewrap" in said


def test_none_runs_as_today_and_says_so(tmp_path: Path, memrepo: GitRepo, cli) -> None:
    seen = tmp_path / "seen.txt"
    command_agent(tmp_path, memrepo, f"open({str(seen)!r}, 'w').write('unconfined')", sandbox="none")
    result = cli(["cycle"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err
    assert seen.read_text() == "unconfined" and "sandbox: none (agent.sandbox: none)" in evidence(memrepo)


def _path_without_bwrap(tmp_path: Path) -> Path:
    """A PATH directory with what a cycle needs (git, sh) and no bwrap."""
    folder = tmp_path / "no-bwrap-bin"
    folder.mkdir()
    for name in ("git", "sh", "env"):
        found = shutil.which(name)
        assert found is not None
        (folder / name).symlink_to(found)
    return folder


# -- run_command ----------------------------------------------------------------------------------------------

@pytest.fixture
def shell_repo(tmp_path: Path, memrepo: GitRepo) -> Iterator[tuple[GitRepo, Path, str]]:
    place = tmp_path / "elsewhere"
    place.mkdir()
    outside, _origin, tip = _stage(memrepo, place)
    yield memrepo, outside, tip


def _toolbox(repo: GitRepo, mode: str, allow: list[str]) -> Toolbox:
    listing = "".join(f"      - {json.dumps(rule)}\n" for rule in allow)
    config = parse_config(f"agent:\n  sandbox: {mode}\n  shell:\n    enabled: true\n    allow:\n{listing}".encode())
    return Toolbox(repo.ws(config), cycle=1)


@needs_bwrap
def test_run_command_runs_in_the_sandbox(shell_repo: tuple[GitRepo, Path, str],
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    repo, outside, tip = shell_repo
    monkeypatch.setenv("DEPLOY_SECRET", WITHHELD)
    tools = _toolbox(repo, "bubblewrap", ["git", "cat", "sh -c"])
    deleted = tools.call("run_command", {"command": "git branch -D human"}).text
    assert not deleted.startswith("exit 0") and "Read-only file system" in deleted
    collected = tools.call("run_command", {"command": "git gc --prune=now"}).text
    assert not collected.startswith("exit 0") and "Read-only file system" in collected
    for command in (f"cat {outside}", f"ls {outside.parent}", f"git -C {outside.parent} status"):
        read = tools.call("run_command", {"command": command}).text
        assert not read.startswith("exit 0") and "private file" not in read, read
    environ = tools.call("run_command", {"command": "sh -c 'cat /proc/*/environ | tr \"\\0\" \"\\n\"'"}).text
    assert environ.startswith("exit 0") and "PATH=" in environ and WITHHELD not in environ
    wrote = tools.call("run_command", {"command": "sh -c 'echo made > made.txt && cat made.txt'"}).text
    assert wrote.startswith("exit 0") and (repo.path / "made.txt").read_text() == "made\n"
    assert git(repo.path, "rev-parse", "refs/heads/human").strip() == tip
    assert tools.notes[0].startswith("run_command: sandbox: bubblewrap")


def test_run_command_under_bubblewrap_without_bwrap_is_a_tool_error(shell_repo: tuple[GitRepo, Path, str],
                                                                   tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    repo, _outside, _tip = shell_repo
    monkeypatch.setenv("PATH", str(_path_without_bwrap(tmp_path)))
    outcome = _toolbox(repo, "bubblewrap", ["git"]).call("run_command", {"command": "git status"})
    assert outcome.is_error and "sudo apt-get install bubblewrap" in outcome.text


@needs_bwrap
def test_a_nested_bwrap_works_inside_the_sandbox(tmp_path: Path, memrepo: GitRepo) -> None:
    """An agent CLI with a sandbox of its own (Codex bundles bubblewrap) can nest its box inside this one."""
    chosen = choose(parse_config(b"agent:\n  sandbox: bubblewrap\n"))
    assert isinstance(chosen, SandboxChoice) and chosen.mode == "bubblewrap"
    argv, env = chosen.wrap([chosen.bwrap, "--ro-bind", "/", "/", "true"], {"PATH": os.environ["PATH"]},
                            workspace=memrepo.ws())
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


# The box's program, given the runner's terminal: it opens /dev/tty and pushes a command line into the
# terminal's input with TIOCSTI, which the human's shell would read and run, outside the box, once gitmem exits.
INJECT = """import fcntl, os, termios
try:
    fd = os.open("/dev/tty", os.O_RDWR)
except OSError as err:
    said = "no terminal: " + (err.strerror or "")
else:
    try:
        for byte in b"touch injected-by-the-agent\\n":
            fcntl.ioctl(fd, termios.TIOCSTI, bytes([byte]))
        said = "injected"
    except OSError as err:
        said = "opened, no TIOCSTI: " + (err.strerror or "")
open("tty.txt", "w").write(said)
"""

# Run where the terminal is the controlling one (a human who runs `gitmem cycle` in a shell): one run_command,
# then what the terminal's reader (the human's shell) gets next.
RUN_ON_A_TERMINAL = """import json, os, select, sys
from gitmem.agents.tools import Toolbox
from gitmem.config import parse_config
from gitmem.workspace import Workspace
config = parse_config(b"agent:\\n  sandbox: bubblewrap\\n  shell:\\n    enabled: true\\n    allow: [python3]\\n")
tools = Toolbox(Workspace.at(sys.argv[1], config), cycle=1)
ran = tools.call("run_command", {"command": "python3 inject.py"}).text
ready, _, _ = select.select([0], [], [], 1.0)
pending = os.read(0, 4096).decode() if ready else ""
json.dump({"ran": ran, "pending": pending}, open(sys.argv[2], "w"))
"""


@needs_bwrap
def test_a_boxed_command_cannot_type_into_the_runners_terminal(tmp_path: Path, memrepo: GitRepo) -> None:
    """bwrap's own hole (CVE-2017-5226): a program in the box that shares the runner's terminal can push input
    into it (TIOCSTI), and the human's shell runs it after gitmem exits, as the human and with no box. The box
    starts its program in a session of its own, with no terminal to open."""
    import pty

    (memrepo.path / "inject.py").write_text(INJECT, encoding="utf-8")
    driver, result = tmp_path / "driver.py", tmp_path / "result.json"
    driver.write_text(RUN_ON_A_TERMINAL, encoding="utf-8")
    pid, terminal = pty.fork()
    if pid == 0:                                   # the child: the pty is its controlling terminal
        os.execv(sys.executable, [sys.executable, str(driver), str(memrepo.path), str(result)])
    while True:                                    # the terminal's output, read so the child never blocks on it
        try:
            if not os.read(terminal, 4096):
                break
        except OSError:
            break
    os.waitpid(pid, 0)
    said = json.loads(result.read_text(encoding="utf-8"))
    assert said["ran"].startswith("exit 0"), said
    assert (memrepo.path / "tty.txt").read_text(encoding="utf-8").startswith("no terminal"), said
    assert "injected-by-the-agent" not in said["pending"], said
