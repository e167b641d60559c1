"""The box on the systems people run, with the real bwrap: a merged-/usr system (`/bin -> usr/bin`, as on
Debian 12, Ubuntu 24.04 and GitHub's runners), run as root (containers, CI) and as an unprivileged user.

- A `#!/bin/sh` agent, and one named by a path relative to the tree (`sh ../agent.sh`), start and write memory:
  the links the box makes for the interpreter never land where a system link already shows it.
- As root the agent holds no privilege: remounting a read-only bind read-write, making a device node and
  mounting the host's disk all fail.
- An interpreter in `~/bin` is bound alone, never the HOME that holds the human's credentials.
- Where bwrap cannot run, the reason given is bwrap's own, and AppArmor is blamed only where it is on.
"""
from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gitmem.agents import sandbox, sandbox_mounts
from gitmem.config import parse_config
from gitmem.errors import ExitCode
from tests.support.helpers import GitRepo, make_repo, with_command_backend
from tests.support.hostile import evidence, no_traceback
from tests.support.nobody import NOBODY, bwrap_works, nobody_place

VENV_BIN = str(Path(sys.executable).parent)
needs_bwrap = pytest.mark.skipif(not bwrap_works([]), reason="bwrap is not installed or cannot create namespaces "
                                                             "here (.ci/run installs bubblewrap)")
SH_AGENT = """#!/bin/sh
cat > /dev/null
gitmem log add --task "sh agent" --outcome built --result "ran under $(readlink -f /proc/$$/exe)"
gitmem now add --did "sh agent" --human nothing --next more
"""


# An agent CLI that runs its commands in a login shell, as Codex does (`bash -lc`): /etc/profile resets PATH
# (Debian's does), and the box's profile puts back the agent's own, where `gitmem` is.
LOGIN_SHELL_AGENT = """#!/bin/sh
cat > /dev/null
exec bash -lc 'gitmem log add --task "sh agent" --outcome built --result "a login shell found gitmem" &&
               gitmem now add --did "sh agent" --human nothing --next more'
"""


def _sh_agent(place: Path, body: str = SH_AGENT) -> Path:
    script = place / "agent.sh"
    script.write_text(body, encoding="utf-8")
    script.chmod(0o755)
    return script


def _use(repo: GitRepo, command: str) -> None:
    text = with_command_backend(repo.read("gitmem.yaml"), command, sandbox="bubblewrap")
    repo.commit_files({"gitmem.yaml": text}, "a shell script agent")


def _assert_built(repo: GitRepo, out: str, err: str) -> None:
    assert no_traceback(err), err
    assert json.loads(out)["outcome"] == "built", (out, err)
    assert "sandbox: bubblewrap" in evidence(repo)
    assert "Task: sh agent" in repo.read("LOG.md")


@needs_bwrap
@pytest.mark.skipif(not os.path.islink("/bin"), reason="not a merged-/usr system")
@pytest.mark.parametrize("command", ["{script}", "sh ../agent.sh", "../agent.sh"],
                         ids=["#!/bin/sh script", "sh ../agent.sh", "../agent.sh"])
def test_a_sh_agent_starts_in_the_box_on_merged_usr(tmp_path: Path, memrepo: GitRepo, cli, command: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    script = _sh_agent(tmp_path)               # outside the tree: memrepo is tmp_path/repo
    _use(memrepo, command.format(script=script))
    monkeypatch.setenv("PATH", f"{VENV_BIN}{os.pathsep}/usr/bin:/bin")
    below = memrepo.path / "docs" / "deep"      # the command's paths are the work tree's, not the caller's
    below.mkdir(parents=True)
    result = cli(["cycle", "--json"], cwd=below)
    assert result.code == ExitCode.OK, result.err
    _assert_built(memrepo, result.out, result.err)


@needs_bwrap
@pytest.mark.skipif(not os.path.islink("/bin"), reason="not a merged-/usr system")
@pytest.mark.parametrize("relative", [False, True], ids=["#!/bin/sh script", "sh ../agent.sh"])
def test_a_sh_agent_starts_in_the_box_for_an_unprivileged_user(git_env: None, relative: bool) -> None:
    with nobody_place("gitmem-sh-agent-") as (place, bin_dir):
        repo = make_repo(place / "repo")
        script = _sh_agent(place)
        _use(repo, "sh ../agent.sh" if relative else str(script))
        subprocess.run(["chown", "-R", "65534:65534", str(place)], check=True)
        env = {"PATH": f"{bin_dir}{os.pathsep}/usr/bin:/bin", "HOME": str(place), "LANG": "C.UTF-8"}
        done = subprocess.run([*NOBODY, str(bin_dir / "gitmem"), "cycle", "--json"], cwd=repo.path, env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == ExitCode.OK, done.stderr
        _assert_built(repo, done.stdout, done.stderr)


def _boxed(repo: GitRepo, argv: list[str], path: str) -> subprocess.CompletedProcess[str]:
    chosen = sandbox.choose(parse_config(b"agent:\n  sandbox: bubblewrap\n"))
    wrapped, env = chosen.wrap(argv, {"PATH": path}, workspace=repo.ws())
    return subprocess.run(wrapped, env=env, capture_output=True, text=True, timeout=60)


def _root_device() -> tuple[int, int]:
    number = os.stat("/").st_dev
    return os.major(number), os.minor(number)


ROOT_ATTACK = """
venv="$1"; home="$2"; major="$3"; minor="$4"
try() { name="$1"; shift; if "$@" >/dev/null 2>&1; then echo "$name=done"; else echo "$name=refused"; fi; }
try remount mount -o remount,rw,bind "$venv"
try venv_write touch "$venv/planted-by-agent"
try mknod mknod /tmp/disk b "$major" "$minor"
mkdir -p /tmp/host
try mount_disk mount /tmp/disk /tmp/host
try mount_tmpfs mount -t tmpfs none /tmp/host
mkdir -p "/tmp/host$home" 2>/dev/null && echo owned > "/tmp/host$home/planted-by-agent" 2>/dev/null
try nested_remount unshare -rm sh -c "mount -o remount,rw,bind '$venv' && touch '$venv/planted-by-agent'"
grep CapEff /proc/self/status
"""


@needs_bwrap
@pytest.mark.skipif(os.geteuid() != 0, reason="the box run by root")
def test_as_root_the_agent_holds_no_privilege(tmp_path: Path, memrepo: GitRepo,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    venv = os.path.realpath(sys.prefix)             # bound read-only: gitmem itself
    major, minor = _root_device()
    done = _boxed(memrepo, ["sh", "-c", ROOT_ATTACK, "attack", venv, str(home), str(major), str(minor)],
                  os.environ["PATH"])
    assert done.returncode == 0, done.stderr
    said = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
    assert said == {name: "refused" for name in ("remount", "venv_write", "mknod", "mount_disk", "mount_tmpfs",
                                                 "nested_remount")}, done.stdout
    assert "CapEff:\t0000000000000000" in done.stdout
    assert not os.path.lexists(Path(venv) / "planted-by-agent") and list(home.iterdir()) == []


@needs_bwrap
@pytest.mark.skipif(os.geteuid() != 0, reason="the box run by root")
def test_as_root_the_agent_reads_no_system_file_other_users_may_not(memrepo: GitRepo) -> None:
    """Run by root, the agent's uid inside maps to root outside, so the owner's bits of every root-owned file
    apply to it: it read /etc/shadow, the host's SSH keys and /etc/ssl/private. The system's configuration
    shows it only what any other user may read, as the box run by an unprivileged user does."""
    withheld = [path for path in ("/etc/shadow", "/etc/gshadow")
                if os.path.isfile(path) and os.path.getsize(path) and not os.stat(path).st_mode & 0o004]
    if not withheld:
        pytest.skip("no /etc/shadow that other users may not read")
    private = "/etc/ssl/private"
    script = "".join(f'echo "{path}=$(head -c 40 {path} 2>/dev/null | tr -d \'\\n\')"; ' for path in withheld)
    script += (f'echo "listed=$(ls -A {private} 2>/dev/null | tr -d \'\\n\')"; '
               'echo "passwd=$(head -c 5 /etc/passwd)"; echo "hosts=$(test -r /etc/hosts && echo yes)"')
    done = _boxed(memrepo, ["sh", "-c", script], "/usr/bin:/bin")
    assert done.returncode == 0, done.stderr
    said = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
    assert all(said[path] == "" for path in withheld), done.stdout
    if os.path.isdir(private) and not os.stat(private).st_mode & 0o001 and os.listdir(private):
        assert said["listed"] == "", done.stdout
    assert said["passwd"] == "root:" and said["hosts"] == "yes", done.stdout       # what every user reads


@needs_bwrap
def test_an_interpreter_in_home_bin_is_bound_alone_never_the_home(tmp_path: Path, memrepo: GitRepo,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    (home / "bin").mkdir(parents=True)
    shell = shutil.which("dash") or shutil.which("sh")
    assert shell is not None
    shutil.copy2(os.path.realpath(shell), home / "bin" / "mysh")
    secret = "https://ada:ghp_" + "N0tReal" * 5 + "@github.com\n"
    (home / ".git-credentials").write_text(secret, encoding="utf-8")
    agent = tmp_path / "agent"
    agent.write_text(f"#!/usr/bin/env mysh\necho started\ncat {home}/.git-credentials\nls {home}\n",
                     encoding="utf-8")
    agent.chmod(0o755)
    monkeypatch.setenv("HOME", str(home))
    done = _boxed(memrepo, [str(agent)], f"{home / 'bin'}{os.pathsep}/usr/bin:/bin")
    assert done.stdout.startswith("started"), done.stderr
    assert "ghp_" not in done.stdout and ".git-credentials" not in done.stdout


@needs_bwrap
@pytest.mark.parametrize("where", [".local/bin", ".config/bin", ".cache/bin", ".cargo/bin"])
def test_an_interpreter_in_a_homes_own_folder_is_bound_alone(tmp_path: Path, memrepo: GitRepo, where: str,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """`~/.local/bin/node` (mise's own binary, which its shims link to, lives there) would make `~/.local` the
    install root: the user's data and state (`~/.local/share`: shell histories, keyrings; `~/.local/state`:
    gitmem's backup bundles of unpushed history). A HOME's own folders are never bound whole either."""
    home = tmp_path / "home"
    (home / where).mkdir(parents=True)
    shell = shutil.which("dash") or shutil.which("sh")
    assert shell is not None
    shutil.copy2(os.path.realpath(shell), home / where / "mysh")
    top = home / where.split("/")[0]
    (top / "share").mkdir()
    (top / "share" / "history").write_text("export GH_TOKEN=ghp_" + "N0tReal" * 5 + "\n", encoding="utf-8")
    agent = tmp_path / "agent"
    agent.write_text(f"#!/usr/bin/env mysh\necho started\ncat {top}/share/history\nls {top}\n", encoding="utf-8")
    agent.chmod(0o755)
    monkeypatch.setenv("HOME", str(home))
    done = _boxed(memrepo, [str(agent)], f"{home / where}{os.pathsep}/usr/bin:/bin")
    assert done.stdout.startswith("started"), done.stderr
    assert "ghp_" not in done.stdout and "share" not in done.stdout, done.stdout


@needs_bwrap
def test_an_interpreter_env_finds_after_a_variable_it_sets_is_bound(tmp_path: Path, memrepo: GitRepo) -> None:
    """`#!/usr/bin/env -S NODE_OPTIONS=... node` (env -S sets the variable, then runs the program it names):
    the program is the first word that is no option and no assignment, and its install is bound."""
    tools = tmp_path / "opt" / "bin"
    tools.mkdir(parents=True)
    shell = shutil.which("dash") or shutil.which("sh")
    assert shell is not None
    shutil.copy2(os.path.realpath(shell), tools / "mysh")
    agent = tmp_path / "agent"
    agent.write_text("#!/usr/bin/env -S GREETING=started mysh\necho \"$GREETING\"\n", encoding="utf-8")
    agent.chmod(0o755)
    done = _boxed(memrepo, [str(agent)], f"{tools}{os.pathsep}/usr/bin:/bin")
    assert done.stdout.startswith("started"), done.stderr


def _fake_bwrap(folder: Path, body: str) -> str:
    folder.mkdir()
    program = folder / "bwrap"
    program.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    program.chmod(0o755)
    return str(folder)


def _sysctl(folder: Path, settings: dict[str, str]) -> Path:
    for name, value in settings.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(f"{value}\n", encoding="ascii")
    return folder


PRELOAD = "ERROR: ld.so: object '/opt/lib/libhook.so' from LD_PRELOAD cannot be preloaded: ignored."
REFUSED = "bwrap: setting up uid map: Permission denied"


@pytest.mark.parametrize(("stderr", "settings", "blamed", "not_blamed"), [
    (f"{PRELOAD}\n{REFUSED}", {"kernel/apparmor_restrict_unprivileged_userns": "1"},
     "kernel.apparmor_restrict_unprivileged_userns=0", "LD_PRELOAD"),
    (f"{PRELOAD}\n{REFUSED}", {"kernel/apparmor_restrict_unprivileged_userns": "0",
                               "kernel/unprivileged_userns_clone": "0"},
     "kernel.unprivileged_userns_clone=1", "apparmor"),
    (REFUSED, {"user/max_user_namespaces": "0"}, "user.max_user_namespaces", "apparmor"),
    (REFUSED, {}, "seccomp", "apparmor"),
    (f"{PRELOAD}\nbwrap: Can't find source path /nope: No such file or directory", {},
     "Can't find source path /nope", "apparmor"),
    (PRELOAD, {"kernel/apparmor_restrict_unprivileged_userns": "1"}, "bwrap said nothing of its own", "apparmor"),
], ids=["apparmor on", "userns_clone off", "max_user_namespaces 0", "no setting", "another failure",
        "only a preload message"])
def test_the_probe_names_the_real_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stderr: str,
                                          settings: dict[str, str], blamed: str, not_blamed: str) -> None:
    folder = _fake_bwrap(tmp_path / "bin", f"cat >&2 <<'EOF'\n{stderr}\nEOF\nexit 1")
    monkeypatch.setattr(sandbox, "SYSCTL", _sysctl(tmp_path / "sys", settings))
    chosen = sandbox.choose(parse_config(b"agent:\n  sandbox: auto\n"), environ={"PATH": folder})
    assert chosen.mode == "none"
    assert blamed in chosen.note and not_blamed.lower() not in chosen.note.lower(), chosen.note


PROVIDER_URL = "http://127.0.0.1:9/v1?token=" + "Qx" * 10       # a value the note must never print
CODEX_CONFIG = f"""model = "gpt-5"
model_provider = "corp"

[model_providers.corp]
name = "the company's gateway"
base_url = "{PROVIDER_URL}"
env_key = "CORP_LLM_KEY"
"""


@needs_bwrap
@pytest.mark.parametrize("named", [False, True], ids=["fresh CODEX_HOME", "CODEX_HOME in writable"])
def test_a_codex_provider_the_box_hides_is_said_at_the_start_and_in_the_log(tmp_path: Path, memrepo: GitRepo,
                                                                            cli, named: bool,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Codex configured in the human's CODEX_HOME reaches no provider from a fresh one inside the box: the
    cycle says so before the agent starts (it would otherwise hang until the timeout, saying nothing), and the
    no-build entry says it too; values never, only names."""
    home = tmp_path / "home"
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "config.toml").write_text(CODEX_CONFIG, encoding="utf-8")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CODEX_HOME", raising=False)
    agent = tmp_path / "codex"
    agent.write_text("#!/bin/sh\ncat > /dev/null\necho 'stream disconnected before completion' >&2\nexit 1\n",
                     encoding="utf-8")
    agent.chmod(0o755)
    text = with_command_backend(memrepo.read("gitmem.yaml"), str(agent), sandbox="bubblewrap")
    if named:
        text = text.replace("    # writable: [~/.cache/my-agent]", "    writable: [~/.codex]")
    memrepo.commit_files({"gitmem.yaml": text}, "Codex as the agent")
    result = cli(["cycle"], cwd=memrepo.path)
    assert no_traceback(result.err)
    said = "the box hides CODEX_HOME"
    if named:
        assert said not in result.err and said not in memrepo.read("LOG.md")
        return
    first = result.err.splitlines()[0]
    assert said in first and "model_provider `corp`" in first and "CORP_LLM_KEY" in first, result.err
    assert "agent.sandbox.writable" in first
    log = " ".join(memrepo.read("LOG.md").split())
    # The LOG's Result is cut at its length limit, and where depends on the temp folder's path: the note's
    # start is there; its whole text is on stderr, asserted above.
    assert said in log
    assert PROVIDER_URL not in result.err + result.out + log and "Qx" * 10 not in result.err + log


def test_claude_settings_that_change_the_endpoint_are_named(tmp_path: Path) -> None:
    from gitmem.agents.sandbox_mounts import hidden_config

    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(json.dumps(
        {"env": {"ANTHROPIC_BASE_URL": "https://gw.example/x?k=secret", "ANTHROPIC_AUTH_TOKEN": "t0ken",
                 "DISABLE_TELEMETRY": "1"}, "apiKeyHelper": "/usr/local/bin/get-key --secret"}), encoding="utf-8")
    said = hidden_config([], {"HOME": str(tmp_path)})
    assert len(said) == 1 and "CLAUDE_CONFIG_DIR" in said[0]
    assert all(name in said[0] for name in ("ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN", "apiKeyHelper"))
    assert "DISABLE_TELEMETRY" not in said[0] and "secret" not in said[0] and "t0ken" not in said[0]
    assert hidden_config(["~/.claude"], {"HOME": str(tmp_path)}) == []


@needs_bwrap
@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_a_login_shell_in_the_box_keeps_the_agents_path(tmp_path: Path, memrepo: GitRepo, cli,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    script = _sh_agent(tmp_path, LOGIN_SHELL_AGENT)
    _use(memrepo, str(script))
    monkeypatch.setenv("PATH", f"{VENV_BIN}{os.pathsep}/usr/bin:/bin")
    result = cli(["cycle", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err
    _assert_built(memrepo, result.out, result.err)


@needs_bwrap
def test_a_missing_relative_agent_path_is_named_before_the_agent_starts(tmp_path: Path, memrepo: GitRepo,
                                                                        cli) -> None:
    _use(memrepo, "../missing/agent.sh")
    result = cli(["cycle", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.SALVAGED and no_traceback(result.err)
    assert f"no such file {tmp_path / 'missing' / 'agent.sh'} (a relative path is the work tree's)" in result.err, \
        result.err


@needs_bwrap
def test_a_missing_absolute_agent_path_is_named_as_it_is(tmp_path: Path, memrepo: GitRepo, cli) -> None:
    _use(memrepo, str(tmp_path / "missing" / "agent.sh"))
    result = cli(["cycle", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.SALVAGED and no_traceback(result.err)
    assert f"no such file {tmp_path / 'missing' / 'agent.sh'};" in result.err, result.err
    assert "relative" not in result.err


def test_no_home_is_bound_even_where_the_import_path_names_it(tmp_path: Path, memrepo: GitRepo,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """A HOME on Python's import path (PYTHONPATH=~, a `.pth` naming it) or holding an interpreter is left out:
    only what the program needs is bound, and a HOME holds the human's credentials."""
    from gitmem.agents.sandbox_mounts import host_mounts

    home = tmp_path / "home"
    (home / "bin").mkdir(parents=True)
    monkeypatch.setattr(sys, "path", [*sys.path, str(home), str(tmp_path)])
    mounts = host_mounts(memrepo.ws(), ["true"], {"PATH": "/usr/bin:/bin"}, environ={"HOME": str(home)})
    assert not any(home.is_relative_to(place) for place in mounts.read_only), mounts.read_only


VENV_AGENT = """import subprocess, sys
import agentlib                              # found only in the agent's own venv
sys.stdin.read()
subprocess.run(["gitmem", "log", "add", "--task", "sh agent", "--outcome", "built", "--result", agentlib.SAID],
               check=True)
subprocess.run(["gitmem", "now", "add", "--did", "sh agent", "--human", "nothing", "--next", "more"], check=True)
"""


@needs_bwrap
@pytest.mark.parametrize("form", ["script", "python"], ids=["the venv's script", "the venv's python naming a script"])
def test_an_agent_installed_in_its_own_venv_starts_with_its_packages(tmp_path: Path, memrepo: GitRepo, cli,
                                                                     form: str,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A Python agent CLI in a venv of its own (pipx, `uv tool`, a project venv): the venv's `bin/python` is a
    link to the base interpreter, and Python finds the venv's packages through `pyvenv.cfg` beside that link's
    `bin/`, so the venv itself is what the program needs, not only the interpreter the link resolves to."""
    venv = tmp_path / "agentvenv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    assert (venv / "bin" / "python").is_symlink()
    package = next(venv.glob("lib/python*/site-packages")) / "agentlib"
    package.mkdir()
    (package / "__init__.py").write_text("SAID = 'the venv package loaded'\n", encoding="utf-8")
    if form == "script":
        program = venv / "bin" / "venv-agent"
        program.write_text(f"#!{venv}/bin/python\n{VENV_AGENT}", encoding="utf-8")
        program.chmod(0o755)
        command = str(program)
    else:
        (tmp_path / "agent.py").write_text(VENV_AGENT, encoding="utf-8")
        command = f"{venv}/bin/python ../agent.py"
    _use(memrepo, command)
    monkeypatch.setenv("PATH", f"{VENV_BIN}{os.pathsep}/usr/bin:/bin")
    result = cli(["cycle", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err
    _assert_built(memrepo, result.out, result.err)
    assert "the venv package loaded" in memrepo.read("LOG.md")


def test_a_venv_that_is_a_home_is_never_bound(tmp_path: Path, memrepo: GitRepo) -> None:
    """A venv made at the HOME itself (`python -m venv ~`) is left out like any HOME: only the interpreter."""
    from gitmem.agents.sandbox_mounts import host_mounts

    home = tmp_path / "home"
    (home / "bin").mkdir(parents=True)
    (home / "pyvenv.cfg").write_text(f"home = {Path(sys.executable).parent}\n", encoding="utf-8")
    (home / "bin" / "python").symlink_to(os.path.realpath(sys.executable))
    (home / ".git-credentials").write_text("secret\n", encoding="utf-8")
    mounts = host_mounts(memrepo.ws(), [str(home / "bin" / "python"), "-c", "pass"], {"PATH": "/usr/bin:/bin"},
                         environ={"HOME": str(home)})
    assert not any(home.is_relative_to(place) for place in mounts.read_only), mounts.read_only


@needs_bwrap
@pytest.mark.parametrize("form", ["link", "script"], ids=["a link (pipx, uv tool)", "a script (pip --user)"])
def test_gitmem_found_in_a_home_bin_is_found_by_the_boxed_agent(tmp_path: Path, memrepo: GitRepo, cli, form: str,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """gitmem installed for the user puts its command in `~/.local/bin`, which the box never binds as a whole
    (a HOME's files): the agent's `gitmem log add` must still find it there, or every boxed cycle is a no-build
    while the same cycle unboxed is built. Nothing else of that HOME is shown."""
    home = tmp_path / "home"
    user_bin = home / ".local" / "bin"
    user_bin.mkdir(parents=True)
    if form == "link":
        (user_bin / "gitmem").symlink_to(Path(VENV_BIN) / "gitmem")
    else:
        (user_bin / "gitmem").write_text(f"#!{sys.executable}\nimport sys\nfrom gitmem.cli import main\n"
                                         "sys.exit(main())\n", encoding="utf-8")
        (user_bin / "gitmem").chmod(0o755)
    (user_bin / "other-tool").write_text("#!/bin/sh\n", encoding="utf-8")
    script = _sh_agent(tmp_path, SH_AGENT.replace("cat > /dev/null\n", f"cat > /dev/null\nls {user_bin} >&2\n"))
    _use(memrepo, str(script))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", f"{user_bin}{os.pathsep}/usr/bin:/bin")
    result = cli(["cycle", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err
    _assert_built(memrepo, result.out, result.err)
    assert "other-tool" not in result.out + result.err + memrepo.read("LOG.md")


@needs_bwrap
@pytest.mark.parametrize("command", ["sh ../agents/agent.sh", "../agents/agent.sh", "{link}/agent.sh"],
                         ids=["sh ../agents/agent.sh", "../agents/agent.sh", "absolute, through the link"])
def test_an_agent_named_through_a_linked_folder_starts_in_the_box(tmp_path: Path, memrepo: GitRepo, cli,
                                                                  command: str,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The script is named by a path through a link to a folder (`agents -> real-agents`): the box shows it
    where the command names it, as the links the agent CLI is found through on PATH are made again."""
    real = tmp_path / "real-agents"
    real.mkdir()
    _sh_agent(real)
    (tmp_path / "agents").symlink_to("real-agents")
    _use(memrepo, command.format(link=tmp_path / "agents"))
    monkeypatch.setenv("PATH", f"{VENV_BIN}{os.pathsep}/usr/bin:/bin")
    result = cli(["cycle", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err
    _assert_built(memrepo, result.out, result.err)


@needs_bwrap
def test_links_on_the_way_and_gitmem_in_home_bin_hold_for_an_unprivileged_user(git_env: None) -> None:
    """The two above, run by `nobody`: the script named through a linked folder, and gitmem found only through
    a link in the HOME's `.local/bin`."""
    with nobody_place("gitmem-linked-agent-") as (place, bin_dir):
        repo = make_repo(place / "repo")
        (place / "real-agents").mkdir()
        _sh_agent(place / "real-agents")
        (place / "agents").symlink_to("real-agents")
        user_bin = place / ".local" / "bin"
        user_bin.mkdir(parents=True)
        (user_bin / "gitmem").symlink_to(bin_dir / "gitmem")
        _use(repo, "sh ../agents/agent.sh")
        subprocess.run(["chown", "-R", "-h", "65534:65534", str(place)], check=True)
        env = {"PATH": f"{user_bin}{os.pathsep}/usr/bin:/bin", "HOME": str(place), "LANG": "C.UTF-8"}
        done = subprocess.run([*NOBODY, str(user_bin / "gitmem"), "cycle", "--json"], cwd=repo.path, env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == ExitCode.OK, done.stderr
        _assert_built(repo, done.stdout, done.stderr)


@needs_bwrap
@pytest.mark.skipif(os.geteuid() != 0, reason="the box run by root")
@pytest.mark.parametrize("mode", ["bubblewrap", "auto"])
def test_as_root_a_work_tree_another_user_owns_is_refused_before_the_agent_starts(
        tmp_path: Path, memrepo: GitRepo, cli, monkeypatch: pytest.MonkeyPatch, mode: str) -> None:
    """Root's agent holds no capability in its box, and a capability would not reach a file of a uid the box
    does not map anyway: in a tree another user owns (a container's bind-mounted checkout, GitHub's container
    jobs, `sudo gitmem cycle`) the agent could write nothing, and bwrap could not even make its mount points.
    Every cycle was a no-build blaming the agent ("Can't mkdir .venv: Permission denied"); the cycle now
    refuses before the agent starts, saying whose tree it is and what to do."""
    script = _sh_agent(tmp_path)
    text = with_command_backend(memrepo.read("gitmem.yaml"), str(script), sandbox=mode)
    memrepo.commit_files({"gitmem.yaml": text}, "a shell script agent")
    monkeypatch.setenv("PATH", f"{VENV_BIN}{os.pathsep}/usr/bin:/bin")
    subprocess.run(["git", "config", "--global", "--add", "safe.directory", str(memrepo.path)], check=True)
    os.chown(memrepo.path, 65534, 65534)
    head = memrepo.head()

    result = cli(["cycle", "--json"], cwd=memrepo.path)

    assert result.code == ExitCode.DIRTY, (result.out, result.err)
    assert no_traceback(result.err)
    said = json.loads(result.out)
    assert said["violations"][0]["code"] == "GM707", said
    assert "owned by uid 65534" in said["refused"] and "run the cycle as that user" in said["refused"], said
    assert memrepo.head() == head and not (memrepo.path / ".venv").exists()


# Plants a link named like a word of its own command line (`json`, as the template's Claude Code command has),
# pointing at a file outside the tree; on its next run, reads the link.
WORD_LINK_AGENT = """#!/bin/sh
cat > /dev/null
if [ -L json ]; then base32 -w0 json > read-through-link.b32 2>/dev/null; else ln -s "$SECRET_FILE" json; fi
gitmem log add --task "sh agent" --outcome built --result "planted or read"
gitmem now add --did "sh agent" --human nothing --next more
"""


@needs_bwrap
def test_a_link_named_like_a_word_of_the_command_binds_nothing_outside_the_tree(
        tmp_path: Path, memrepo: GitRepo, cli, monkeypatch: pytest.MonkeyPatch) -> None:
    """The box binds the files its command line names, so a relative script outside the tree runs. A word of
    the command that names a file in the tree is the agent's to make: a link there named `json`, `-` or
    `acceptEdits` (words of the recipes' commands) to the human's credentials got them bound into the next
    cycle's box, where the agent read and committed them. Only a file the human names outside the tree is
    bound; one in the tree is there already."""
    secret = tmp_path / "human" / ".git-credentials"
    secret.parent.mkdir()
    secret.write_text("https://human:hunter2-credential@example.invalid\n", encoding="utf-8")
    script = _sh_agent(tmp_path, WORD_LINK_AGENT.replace("$SECRET_FILE", str(secret)))
    _use(memrepo, f"{script} --output-format json")
    monkeypatch.setenv("PATH", f"{VENV_BIN}{os.pathsep}/usr/bin:/bin")

    for _ in range(2):
        result = cli(["cycle", "--json"], cwd=memrepo.path)
        assert result.code == ExitCode.OK, result.err
        _assert_built(memrepo, result.out, result.err)

    assert os.path.islink(memrepo.path / "json")
    read = memrepo.path / "read-through-link.b32"
    assert not read.exists() or b"hunter2" not in base64.b32decode(read.read_bytes()), "the box bound the target"


@pytest.mark.parametrize("word", ["json", "sub/../../human/.git-credentials", "{tree_link}/json"],
                         ids=["a link in the tree", "through a link in the tree", "through a link to the tree"])
def test_a_command_word_reaching_into_the_tree_binds_nothing(tmp_path: Path, memrepo: GitRepo, word: str) -> None:
    secret = tmp_path / "human" / ".git-credentials"
    secret.parent.mkdir()
    secret.write_text("secret\n", encoding="utf-8")
    (memrepo.path / "json").symlink_to(secret)
    (memrepo.path / "sub").symlink_to(tmp_path / "human" / "deeper", target_is_directory=True)
    (tmp_path / "human" / "deeper").mkdir()
    (tmp_path / "tree-link").symlink_to(memrepo.path, target_is_directory=True)
    outside = tmp_path / "agent.sh"
    outside.write_text("#!/bin/sh\n", encoding="utf-8")
    argv = ["sh", "../agent.sh", word.format(tree_link=tmp_path / "tree-link")]
    mounts = sandbox_mounts.host_mounts(memrepo.ws(), argv, {"PATH": "/usr/bin:/bin"})
    assert str(outside) in mounts.read_only, "a file the human names outside the tree is bound"
    assert not [d for d in mounts.read_only if Path(d).is_relative_to(tmp_path / "human")], mounts.read_only


@needs_bwrap
@pytest.mark.parametrize("wrapper", ["timeout 600", "env FOO=1", "nice -n 5"])
def test_an_agent_cli_started_through_a_wrapper_is_found_in_the_box(tmp_path: Path, memrepo: GitRepo, cli,
                                                                    monkeypatch: pytest.MonkeyPatch,
                                                                    wrapper: str) -> None:
    """The box binds the agent CLI's install, found as the command's first word; a CLI started through a
    wrapper (`timeout 600 claude`, `env VAR=x codex`) was the wrapper's argument, never bound: "No such file"
    inside, for a CLI in `~/.local/bin` (where Claude Code's own installer puts it), and every cycle a no-build.
    A bare word of the command found on PATH is bound as the CLI is (alone, from a HOME's folder)."""
    home = tmp_path / "home"
    local_bin = home / ".local" / "bin"
    local_bin.mkdir(parents=True)
    (home / ".git-credentials").write_text("https://human:not-for-the-agent@example.invalid\n", encoding="utf-8")
    _sh_agent(local_bin).rename(local_bin / "mycli")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", f"{local_bin}{os.pathsep}{VENV_BIN}{os.pathsep}/usr/bin:/bin")
    _use(memrepo, f"{wrapper} mycli")

    result = cli(["cycle", "--json"], cwd=memrepo.path)

    assert result.code == ExitCode.OK, result.err
    _assert_built(memrepo, result.out, result.err)
    mounts = sandbox_mounts.host_mounts(memrepo.ws(), [*wrapper.split(), "mycli"], {"PATH": os.environ["PATH"]})
    assert str(local_bin / "mycli") in mounts.read_only
    assert not [d for d in mounts.read_only if Path(home).is_relative_to(d) or d == str(home / ".local")]


@needs_bwrap
@pytest.mark.parametrize("home", [".", "people/ada"], ids=["the tree is the HOME", "the tree holds the HOME"])
def test_a_work_tree_that_is_or_holds_the_home_is_refused_before_the_agent_starts(
        tmp_path: Path, memrepo: GitRepo, cli, monkeypatch: pytest.MonkeyPatch, home: str) -> None:
    """The box gives the agent the work tree read-write and never the HOME; a memory repository kept in the HOME
    itself (a notes or dotfiles repository) gave it the HOME: keys, shell startup files, every other
    repository. The cycle refuses before the agent starts, as it does for agent.sandbox.writable."""
    script = _sh_agent(tmp_path)
    _use(memrepo, str(script))
    (memrepo.path / home).mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("HOME", str(memrepo.path / home))
    monkeypatch.setenv("PATH", f"{VENV_BIN}{os.pathsep}/usr/bin:/bin")
    head = memrepo.head()

    result = cli(["cycle", "--json"], cwd=memrepo.path)

    assert result.code == ExitCode.DIRTY, (result.out, result.err)
    said = json.loads(result.out)
    assert said["violations"][0]["code"] == "GM707" and "is the HOME or holds it" in said["refused"], said
    assert memrepo.head() == head


@needs_bwrap
def test_a_home_inside_usr_leaves_the_system_in_the_box_and_shows_nothing_of_the_home(
        memrepo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    """A HOME under /usr (`/usr/local/home/ada`, a service user's `/usr/share/app`): the box left /usr out, as it
    leaves out every folder that holds a HOME, and every agent was a no-build ("execvp ...: No such file").
    The system's folders are bound all the same, and the HOME inside is an empty folder."""
    home = Path("/usr/share/doc")              # a folder under /usr with files in it, standing in for such a HOME
    if not home.is_dir() or not any(home.iterdir()):
        pytest.skip("no /usr/share/doc with files in it")
    monkeypatch.setenv("HOME", str(home))
    box = sandbox.choose(parse_config(b"agent:\n  sandbox: bubblewrap\n"))
    probe = ("import os, subprocess, sys, gitmem; "
             "print(len(os.listdir(sys.argv[1])), subprocess.run(['/bin/sh', '-c', 'echo sh ran'], "
             "capture_output=True, text=True).stdout.strip())")
    argv, env = box.wrap([sys.executable, "-c", probe, str(home)], {"PATH": os.environ["PATH"]},
                         workspace=memrepo.ws())
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "sh", "ran"], done.stdout


# Run by a Python whose prefix is ~/.local: the box for a probe that lists ~/.local/share and starts that Python.
LOCAL_PREFIX_RUNNER = """import os, subprocess, sys
from pathlib import Path
from gitmem.agents.sandbox import choose
from gitmem.config import parse_config
from gitmem.workspace import Workspace
local = os.path.join(os.environ["HOME"], ".local")
probe = 'ls -A "$0/share"; "$1" -c "import os, json; print(\\'python ran\\')"'
argv, env = choose(parse_config(b"agent:\\n  sandbox: bubblewrap\\n")).wrap(
    ["/bin/sh", "-c", probe, local, sys.executable], {"PATH": "/usr/bin:/bin"}, workspace=Workspace.at(sys.argv[1]))
done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
print(done.stdout + done.stderr)
"""


@needs_bwrap
def test_a_python_installed_in_the_homes_local_folder_shows_the_agent_none_of_that_folder(
        tmp_path: Path, memrepo: GitRepo) -> None:
    """A Python built with `--prefix ~/.local` (the way to a newer Python without root) runs gitmem with
    sys.prefix ~/.local: the box bound that prefix whole, and the agent read ~/.local/share (keyrings, shell
    histories) and ~/.local/state (gitmem's own refs backups). Only its own folders are bound now."""
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    system = Path("/usr/bin") / version
    if not system.is_file() or not (Path("/usr/lib") / version / "os.py").is_file():
        pytest.skip(f"no system {version} to install under a HOME")
    home = tmp_path / "home"
    (home / ".local" / "bin").mkdir(parents=True)
    (home / ".local" / "lib").mkdir()
    (home / ".local" / "share" / "keyrings").mkdir(parents=True)
    (home / ".local" / "share" / "keyrings" / "login.keyring").write_text("the human's keyring\n")
    python = home / ".local" / "bin" / version
    shutil.copy2(system, python)                                    # its prefix is ~/.local: it finds its
    (home / ".local" / "lib" / version).symlink_to(Path("/usr/lib") / version)    # library there
    runner = tmp_path / "runner.py"
    runner.write_text(LOCAL_PREFIX_RUNNER, encoding="utf-8")
    site = next(p for p in sys.path if p.endswith("site-packages") and p.startswith(sys.prefix))
    checkout = Path(sandbox.__file__).resolve().parents[2]
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": f"{checkout}{os.pathsep}{site}"}
    prefix = subprocess.run([str(python), "-c", "import sys; print(sys.prefix)"], env=env, capture_output=True,
                            text=True, check=True).stdout.strip()
    assert prefix == str(home / ".local")
    done = subprocess.run([str(python), str(runner), str(memrepo.path)], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert "keyrings" not in done.stdout and "No such file or directory" in done.stdout, done.stdout
    assert "python ran" in done.stdout, done.stdout


@needs_bwrap
def test_a_work_tree_that_is_one_of_the_homes_data_folders_is_refused_before_the_agent_starts(
        tmp_path: Path, cli, monkeypatch: pytest.MonkeyPatch, git_env: None) -> None:
    """A memory repository kept as `~/.config` itself (a dotfiles habit) gave the agent every program's settings
    read-write: `gh`'s token, cloud credentials, other agent CLIs' hooks. The box never binds a HOME's data
    folder; as for a tree that is the HOME, the cycle refuses before the agent starts."""
    home = tmp_path / "home"
    repo = make_repo(home / ".config")
    _use(repo, str(_sh_agent(tmp_path)))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", f"{VENV_BIN}{os.pathsep}/usr/bin:/bin")
    head = repo.head()

    result = cli(["cycle", "--json"], cwd=repo.path)

    assert result.code == ExitCode.DIRTY, (result.out, result.err)
    said = json.loads(result.out)
    assert said["violations"][0]["code"] == "GM707" and "data folders" in said["refused"], said
    assert repo.head() == head
