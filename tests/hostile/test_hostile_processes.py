"""Hostile agents, class 3d/4: what the agent runs and what it can see. Every file tool applies the same
confinement; every process the agent started ends with the cycle (setsid, double forks, the in-process shell
tool included); the `command` agent's environment holds no token or key the config did not pass, and never a
GitHub token."""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import pytest

from gitmem.agents.tools import Toolbox
from gitmem.cycle import reaper
from gitmem.errors import ExitCode
from gitmem.secrets import agent_environment
from tests.support.helpers import GitRepo
from tests.support.hostile import command_agent, cycle, evidence, no_traceback

LINUX = sys.platform.startswith("linux") and Path("/proc/self/stat").exists()
MARK = f"{300 + os.getpid() % 1000}.{time.time_ns() % 10**6}"        # a sleep no other process on this machine runs


def _marked() -> list[int]:
    """Live processes running `sleep MARK` (other tests on the machine may run sleeps of their own)."""
    found = []
    for proc in reaper.processes().values():
        try:
            argv = Path(f"/proc/{proc.pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if MARK.encode() in argv and proc.state not in ("Z", "X"):
            found.append(proc.pid)
    return found


@pytest.fixture
def box(memrepo: GitRepo) -> Toolbox:
    return Toolbox(memrepo.ws(), cycle=1)


@pytest.fixture
def outside(tmp_path: Path, memrepo: GitRepo) -> Path:
    """A secret outside the tree, reachable through links inside it."""
    place = tmp_path / "outside"
    place.mkdir()
    (place / "passwd").write_text("root:x:0:0:OUTSIDE-SECRET\n")
    os.symlink(place / "passwd", memrepo.path / "passwd-link")
    os.symlink(place, memrepo.path / "dir-link")
    os.symlink(memrepo.path / ".git", memrepo.path / "git-link")
    (memrepo.path / "docs").mkdir()
    os.symlink("../passwd-link", memrepo.path / "docs" / "chained")
    return place


@pytest.mark.parametrize("tool,args", [
    ("search_files", {"pattern": "OUTSIDE-SECRET"}),
    ("search_files", {"pattern": "OUTSIDE-SECRET", "path": "docs"}),
    ("search_files", {"pattern": "repositoryformatversion"}),
    ("search_files", {"pattern": "OUTSIDE", "glob": "*passwd*"}),
    ("list_files", {}),
    ("list_files", {"recursive": False}),
    ("read_file", {"path": "docs/chained"}),
    ("read_file", {"path": "dir-link/passwd"}),
    ("edit_file", {"path": "passwd-link", "old_text": "root", "new_text": "evil"}),
    ("write_file", {"path": "dir-link/new.txt", "content": "x"}),
])
def test_every_file_tool_applies_the_same_confinement(box: Toolbox, outside: Path, tool: str, args: dict) -> None:
    outcome = box.call(tool, args)
    text = outcome.text
    for value in args.values():             # a refusal may quote what was asked; nothing else may show
        text = text.replace(repr(value), "").replace(str(value), "")
    assert "OUTSIDE-SECRET" not in text and "repositoryformatversion" not in text
    assert "dir-link/" not in text and "passwd-link" not in text and "git-link/" not in text
    assert sorted(p.name for p in outside.iterdir()) == ["passwd"]
    assert (outside / "passwd").read_text() == "root:x:0:0:OUTSIDE-SECRET\n"


def test_a_tool_write_to_a_protected_path_says_what_will_happen(box: Toolbox, memrepo: GitRepo) -> None:
    outcome = box.call("write_file", {"path": ".github/workflows/x.yml", "content": "on: push\n"})
    assert not outcome.is_error and "protected path" in outcome.text and "asks the human" in outcome.text
    refused = box.call("write_file", {"path": "gitmem.yaml", "content": "x: 1\n"})
    assert refused.is_error and "ask_decision" in refused.text


# -- processes ----------------------------------------------------------------------------------------------------

ESCAPES = {  # the agent script gets MARK through its source
    "setsid": "subprocess.Popen(['setsid', 'sleep', MARK_ARG], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, "
              "stderr=subprocess.DEVNULL)",
    "new-session": "subprocess.Popen(['sleep', MARK_ARG], start_new_session=True, stdin=subprocess.DEVNULL, "
                   "stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)",
    "double-fork": "subprocess.Popen(['sh', '-c', '(setsid sleep MARK_SH </dev/null >/dev/null 2>&1 &) ; exit 0'], "
                   "stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).wait()",
    "same-group": "subprocess.Popen(['sleep', MARK_ARG], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, "
                  "stderr=subprocess.DEVNULL)",
}


@pytest.mark.skipif(not LINUX, reason="the child subreaper needs Linux prctl and /proc")
@pytest.mark.parametrize("how", sorted(ESCAPES))
def test_processes_the_agent_leaves_running_end_with_the_cycle(tmp_path: Path, memrepo: GitRepo, cli,
                                                              how: str) -> None:
    source = ESCAPES[how].replace("MARK_ARG", repr(MARK)).replace("MARK_SH", MARK)
    started = ("import time, glob\ntime.sleep(0.3)\n"
               "def read(path):\n    try:\n        return open(path, 'rb').read()\n    except OSError:\n"
               "        return b''\n"
               f"assert any({MARK!r}.encode() in read(p) for p in glob.glob('/proc/[0-9]*/cmdline')), 'not started'\n")
    command_agent(tmp_path, memrepo, source + "\n" + started)
    result = cli(["cycle", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err
    assert no_traceback(result.err)
    assert _marked() == []
    report = json.loads(result.out)
    if how != "same-group":       # its own process group ends with it; the reaper ends the rest
        assert any("ended" in m and "process" in m for m in report["messages"])
    assert "survived" not in evidence(memrepo)


@pytest.mark.skipif(not LINUX, reason="the child subreaper needs Linux prctl and /proc")
def test_the_in_process_shell_tool_cannot_leave_a_daemon_behind(memrepo: GitRepo) -> None:
    def act(root: Path, memory, request) -> None:
        import subprocess
        subprocess.run(["sh", "-c", f"setsid sleep {MARK} </dev/null >/dev/null 2>&1 &"], check=True)
        time.sleep(0.2)
        assert _marked() != []          # it did start, and outlived the tool call

    report = cycle(memrepo, act)
    assert report.exit_code == ExitCode.OK
    assert _marked() == []


def test_a_survivor_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    """A process the runner cannot kill (another user's) is named in the report, not silently left."""
    ghost = reaper.Process(999999, os.getpid(), "S", "stubborn")
    calls = {"n": 0}

    def fake_descendants(root: int, table=None):
        calls["n"] += 1
        return [] if calls["n"] == 1 else [ghost]

    monkeypatch.setattr(reaper, "descendants", fake_descendants)
    monkeypatch.setattr(reaper, "_alive", lambda pid: True)
    monkeypatch.setattr(reaper, "_signal", lambda pid, sig: None)
    guard = reaper.Reaper().start()
    lines = guard.finish(grace=0.1)
    assert lines == ["1 process(es) the agent started survived the end of the cycle: pid 999999 (stubborn)"]


# -- the command agent's environment --------------------------------------------------------------------------------

SECRETS_ENV = {
    "GITHUB_TOKEN": "ghs_" + "a1B2c3D4e5" * 4,
    "GH_TOKEN": "gho_" + "z9Y8x7W6v5" * 4,
    "GITMEM_GIT_TOKEN": "ghs_" + "q1w2e3r4t5" * 4,
    "ANTHROPIC_API_KEY": "sk-ant-api03-" + "k" * 40,
    "OPENAI_API_KEY": "sk-proj-" + "Ab_c-" * 10,
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "DATABASE_PASSWORD": "hunter2hunter2",
    "INNOCENT_NAME": "ghp_" + "h1dd3nT0k3n" * 4,
    "SSH_AUTH_SOCK": "/tmp/ssh-agent.sock",
}

@pytest.mark.parametrize("passed", [(), ("ANTHROPIC_API_KEY",), None], ids=["nothing-passed", "template",
                                                                         "config-from-0.1.0"])
def test_the_command_agent_gets_no_token_or_key_it_was_not_given(tmp_path: Path, memrepo: GitRepo, cli,
                                                                 monkeypatch: pytest.MonkeyPatch,
                                                                 passed: tuple[str, ...] | None) -> None:
    for name, value in SECRETS_ENV.items():
        monkeypatch.setenv(name, value)
    seen_at = tmp_path / "env.json"
    command_agent(tmp_path, memrepo, f"import json\nopen({str(seen_at)!r}, 'w').write(json.dumps(dict(os.environ)))",
                  pass_env=passed)
    result = cli(["cycle", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err
    seen = json.loads(seen_at.read_text())
    passed = ("ANTHROPIC_API_KEY",) if passed is None else passed       # the model's key passes by default
    for name, value in SECRETS_ENV.items():
        # A passed model key reaches the agent as a placeholder (gitmem.agents.key_stand_in), never as itself.
        assert seen.get(name, "").startswith("gitmem-placeholder-") == (name in passed), name
        assert value not in json.dumps(seen)
    assert seen["GITMEM_CYCLE"] == "1" and "PATH" in seen and "HOME" in seen


@pytest.mark.parametrize("name", ["GITHUB_TOKEN", "GH_TOKEN", "GITMEM_GIT_TOKEN", "github_token"])
def test_the_config_cannot_pass_a_github_token(memrepo: GitRepo, cli, name: str) -> None:
    text = memrepo.read("gitmem.yaml").replace("    - ANTHROPIC_API_KEY\n", f"    - {name}\n")
    memrepo.commit_files({"gitmem.yaml": text}, "pass a token")
    result = cli(["check", "--worktree"], cwd=memrepo.path)
    assert result.code == ExitCode.USAGE and no_traceback(result.err)
    assert "GitHub tokens never reach the agent" in result.err and "gitmem.yaml:" in result.err


def test_a_github_token_under_another_name_never_passes() -> None:
    token = "github_pat_11AAAAAAA0" + "x" * 60
    env = agent_environment({"HOME": "/h", "MY_SETTING": token, "OTHER": "fine"}, ["MY_SETTING"])
    assert env == {"HOME": "/h", "OTHER": "fine"}


def test_without_a_subreaper_the_report_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reaper, "_prctl", lambda option, value: None)
    guard = reaper.Reaper().start()
    assert guard.finish() == []
    assert any("no child subreaper" in m for m in guard.messages)
