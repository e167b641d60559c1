"""The sandbox's parts as pure functions: the bwrap command line (mounts in order), the environment's
allow-list, the mode chosen on a machine with or without a working bwrap, and agent.sandbox in gitmem.yaml."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from gitmem.agents import sandbox
from gitmem.agents.sandbox_mounts import HOME, Mounts, host_mounts
from gitmem.config import ConfigError, parse_config
from tests.support.helpers import GitRepo

TREE = "/srv/agent/repo"
MOUNTS = Mounts(links=(("usr/bin", "/bin"),), read_only=("/usr", "/etc", "/opt/venv", f"{TREE}/.venv"),
                program_links=(("/opt/npm/lib/node_modules/agent/cli.js", "/home/ada/.npm/bin/agent"),),
                writable=("/home/ada/.claude",), optional=("/home/ada/.cache/x",), work_tree=TREE,
                git_read_only=(f"{TREE}/.git", "/srv/objects"), state_dir=f"{TREE}/.git/gitmem",
                env={"CLAUDE_CONFIG_DIR": "/home/ada/.claude", "CODEX_HOME": f"{HOME}/.codex"},
                made=(HOME, f"{HOME}/.codex"))


def _binds(argv: list[str]) -> list[tuple[str, str]]:
    """(flag, destination) of every mount, in order."""
    flags = {"--bind", "--ro-bind", "--bind-try", "--symlink"}
    return [(argv[i], argv[i + 2]) for i in range(len(argv) - 2) if argv[i] in flags]


def test_the_work_tree_is_bound_then_git_read_only_over_it_then_gitmem_state_read_write() -> None:
    argv = sandbox.bwrap_argv("/usr/bin/bwrap", MOUNTS, ["claude", "-p"])
    binds = _binds(argv)
    order = [binds.index(item) for item in (("--bind", TREE), ("--ro-bind", f"{TREE}/.git"),
                                            ("--ro-bind", "/srv/objects"), ("--bind", f"{TREE}/.git/gitmem"),
                                            ("--ro-bind", f"{TREE}/.venv"))]
    assert order == sorted(order)
    # Everything else comes before the work tree, so nothing covers it, .git or .git/gitmem again.
    assert all(binds.index(("--ro-bind", d)) < order[0] for d in ("/usr", "/etc", "/opt/venv"))
    assert binds.index(("--bind", "/home/ada/.claude")) < order[0]
    assert binds.index(("--bind-try", "/home/ada/.cache/x")) < order[0]
    assert ("--symlink", "/bin") in binds
    # The agent CLI's links are made once the read-only installs holding their targets are bound.
    made = binds.index(("--symlink", "/home/ada/.npm/bin/agent"))
    assert binds.index(("--ro-bind", "/opt/venv")) < made < binds.index(("--bind", "/home/ada/.claude"))
    assert argv[-5:] == ["--chdir", TREE, "--", "claude", "-p"]


def test_private_tmp_and_home_come_before_any_bind_and_the_network_stays_open() -> None:
    argv = sandbox.bwrap_argv("bwrap", MOUNTS, ["agent"])
    first_bind = min(i for i, word in enumerate(argv) if word in ("--bind", "--ro-bind"))
    assert argv.index("--tmpfs") < argv.index("--dir") < first_bind and argv[argv.index("--tmpfs") + 1] == "/tmp"
    assert {"--die-with-parent", "--unshare-pid"} <= set(argv[:3])
    assert argv[argv.index("--proc") + 1] == "/proc" and argv[argv.index("--dev") + 1] == "/dev"
    assert "--unshare-net" not in argv and "--unshare-all" not in argv and "--share-net" not in argv
    assert "--setenv" not in argv        # values never go on a command line every user can read


def test_the_environment_is_an_allow_list() -> None:
    env = {"PATH": "/usr/bin", "LANG": "C.UTF-8", "LC_ALL": "C", "TERM": "xterm", "TZ": "UTC",
           "GITMEM_CYCLE": "3", "GITMEM_ROOT": TREE, "ANTHROPIC_API_KEY": "sk-ant-x", "ANTHROPIC_MODEL": "m",
           "OPENAI_API_KEY": "sk-proj-y", "SSH_AUTH_SOCK": "/s", "MY_SETTING": "plain", "HOME": "/root",
           "TMPDIR": "/var/tmp", "LD_PRELOAD": "/evil.so", "PYTHONPATH": "/evil",
           "ANTHROPIC_BASE_URL": "https://gateway.example", "OPENAI_BASE_URL": "https://llm.example/v1",
           "CLAUDE_CODE_USE_BEDROCK": "1"}
    kept = sandbox.confined_environment(env, MOUNTS, keep=("ANTHROPIC_API_KEY", "ANTHROPIC_MODEL"))
    assert kept == {"PATH": "/usr/bin", "LANG": "C.UTF-8", "LC_ALL": "C", "TERM": "xterm", "TZ": "UTC",
                    "GITMEM_CYCLE": "3", "GITMEM_ROOT": TREE, "ANTHROPIC_API_KEY": "sk-ant-x",
                    "ANTHROPIC_MODEL": "m", "HOME": HOME, "TMPDIR": "/tmp",
                    "ANTHROPIC_BASE_URL": "https://gateway.example", "OPENAI_BASE_URL": "https://llm.example/v1",
                    "CLAUDE_CONFIG_DIR": "/home/ada/.claude", "CODEX_HOME": f"{HOME}/.codex"}
    assert "ANTHROPIC_API_KEY" not in sandbox.confined_environment(env, MOUNTS)


def test_the_endpoint_the_key_goes_to_reaches_the_box_unnamed() -> None:
    """Where the model's requests go is kept without agent.pass_env, so a passed key goes to the host the human
    chose, in the box as out of it; the CLI's other switches (CLAUDE_CODE_USE_BEDROCK) still need naming."""
    env = {"ANTHROPIC_BASE_URL": "http://127.0.0.1:8080", "OPENAI_BASE_URL": "http://127.0.0.1:9090/v1",
           "CLAUDE_CODE_USE_BEDROCK": "1"}
    kept = sandbox.confined_environment(env, MOUNTS)
    assert (kept["ANTHROPIC_BASE_URL"], kept["OPENAI_BASE_URL"]) == (env["ANTHROPIC_BASE_URL"],
                                                                     env["OPENAI_BASE_URL"])
    assert "CLAUDE_CODE_USE_BEDROCK" not in kept
    assert sandbox.confined_environment(env, MOUNTS, keep=("CLAUDE_CODE_USE_BEDROCK",))["CLAUDE_CODE_USE_BEDROCK"]


def test_a_repository_found_through_git_dir_is_found_inside_too() -> None:
    kept = sandbox.confined_environment({"GIT_DIR": "/srv/repo.git", "GIT_INDEX_FILE": "/x"}, MOUNTS)
    assert kept["GIT_DIR"] == "/srv/repo.git" and kept["GIT_WORK_TREE"] == TREE and "GIT_INDEX_FILE" not in kept


def _config(mode: str):
    return parse_config(f"agent:\n  sandbox: {mode}\n".encode())


def _fake_bwrap(folder: Path, body: str) -> str:
    folder.mkdir()
    program = folder / "bwrap"
    program.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    program.chmod(0o755)
    return str(folder)


def test_none_runs_as_a_plain_process_and_says_so(tmp_path: Path) -> None:
    chosen = sandbox.choose(_config("none"), environ={"PATH": str(tmp_path)})
    assert chosen.mode == "none" and "agent.sandbox: none" in chosen.note
    assert chosen.wrap(["a", "b"], {"X": "1"}, workspace=None) == (["a", "b"], {"X": "1"})  # type: ignore[arg-type]


@pytest.mark.parametrize("mode", ["auto", "bubblewrap"])
def test_without_bwrap_auto_falls_back_and_bubblewrap_refuses_with_the_install_line(tmp_path: Path,
                                                                                   mode: str) -> None:
    environ = {"PATH": str(tmp_path)}         # no bwrap there
    if mode == "auto":
        chosen = sandbox.choose(_config(mode), environ=environ)
        assert chosen.mode == "none" and "sudo apt-get install bubblewrap" in chosen.note
        assert "agent.sandbox: auto" in chosen.note
    else:
        with pytest.raises(sandbox.SandboxUnavailable, match="sudo apt-get install bubblewrap") as caught:
            sandbox.choose(_config(mode), environ=environ)
        assert caught.value.exit_code == 3 and "\n" not in str(caught.value)


@pytest.mark.parametrize("said", ["bwrap: No permissions to create new namespace, likely because the kernel "
                                  "does not allow non-privileged user namespaces",
                                  "bwrap: setting up uid map: Permission denied"])
def test_a_bwrap_that_cannot_make_namespaces_gets_the_apparmor_hint(tmp_path: Path, said: str,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _fake_bwrap(tmp_path / "bin", f"echo '{said}' >&2; exit 1")
    setting = tmp_path / "sys" / "kernel" / "apparmor_restrict_unprivileged_userns"     # Ubuntu 24.04's
    setting.parent.mkdir(parents=True)
    setting.write_text("1\n", encoding="ascii")
    monkeypatch.setattr(sandbox, "SYSCTL", tmp_path / "sys")
    with pytest.raises(sandbox.SandboxUnavailable, match="kernel.apparmor_restrict_unprivileged_userns=0"):
        sandbox.choose(_config("bubblewrap"), environ={"PATH": folder})
    chosen = sandbox.choose(_config("auto"), environ={"PATH": folder})
    assert chosen.mode == "none" and "apparmor" in chosen.note


def test_bwrap_is_probed_once(tmp_path: Path) -> None:
    count = tmp_path / "count"
    folder = _fake_bwrap(tmp_path / "bin", f"echo x >> {count}; exit 0")
    for _ in range(3):
        assert sandbox.choose(_config("auto"), environ={"PATH": folder}).mode == "bubblewrap"
    assert count.read_text().count("x") == 1


def test_the_mode_is_needed_for_the_command_agent_and_for_run_command() -> None:
    plain = parse_config(b"agent:\n  backend: scripted\n")
    shell = parse_config(b"agent:\n  shell:\n    enabled: true\n")
    assert sandbox.needed(plain, "command") and sandbox.needed(shell, "scripted")
    assert not sandbox.needed(plain, "scripted") and not sandbox.needed(plain, "anthropic")


# -- agent.sandbox in gitmem.yaml ------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "mode", "writable"), [
    ("", "auto", ()),
    ("agent:\n  sandbox: none\n", "none", ()),
    ("agent:\n  sandbox: bubblewrap\n", "bubblewrap", ()),
    ("agent:\n  sandbox:\n    mode: bubblewrap\n    writable:\n      - /opt/cache\n      - ~/.cache/x\n",
     "bubblewrap", ("/opt/cache", "~/.cache/x")),
    ("agent:\n  sandbox: {mode: none, writable: [/var/cache/a]}\n", "none", ("/var/cache/a",)),
    ("agent:\n  sandbox:\n", "auto", ()),
])
def test_the_config_takes_the_shorthand_and_the_mapping(text: str, mode: str, writable: tuple[str, ...]) -> None:
    config = parse_config(text.encode())
    assert (config.agent.sandbox.mode, config.agent.sandbox.writable) == (mode, writable)


@pytest.mark.parametrize(("text", "line", "says"), [
    ("agent:\n  model: m\n  sandbox: jail\n", 3, "is not one of auto, bubblewrap, none"),
    ("agent:\n  sandbox:\n    mode: off\n", 3, "is not one of"),
    ("agent:\n  sandbox:\n    mode: false\n", 3, "expected text, got false (a yes/no value)"),
    ("agent:\n  sandbox: 3\n", 2, "expected one of auto, bubblewrap, none or a mapping"),
    ("agent:\n  sandbox: [auto]\n", 2, "expected one of auto, bubblewrap, none or a mapping"),
    ("agent:\n  sandbox:\n    writable:\n      - relative/dir\n", 3, "must be an absolute directory"),
    ("agent:\n  sandbox:\n    writable:\n      - /\n", 3, "must be an absolute directory"),
    ("agent:\n  sandbox:\n    writable:\n      - /a/../etc\n", 3, "must be an absolute directory"),
    # `/` and `~` however spelled: bound read-write, either would undo the box
    ("agent:\n  sandbox:\n    writable:\n      - /.\n", 3, "not / or ~ itself"),
    ("agent:\n  sandbox:\n    writable:\n      - /./\n", 3, "not / or ~ itself"),
    ("agent:\n  sandbox:\n    writable:\n      - ~/.\n", 3, "not / or ~ itself"),
    ("agent:\n  sandbox:\n    writable:\n      - ~/./\n", 3, "not / or ~ itself"),
    ("agent:\n  sandbox:\n    writable:\n      - //\n", 3, "not / or ~ itself"),
    ("agent:\n  sandbox:\n    writable:\n      - \"/a\\u0007b\"\n", 3, "U+0007"),
    ("agent:\n  sandbox:\n    writable: /opt\n", 3, "expected a list of strings"),
])
def test_a_bad_sandbox_setting_is_one_line_naming_its_line(text: str, line: int, says: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(text.encode())
    message = str(caught.value)
    assert re.match(f"gitmem.yaml:{line}: GM92[78] agent.sandbox", message) and says in message and "\n" not in message


def test_an_unknown_sandbox_key_warns() -> None:
    config = parse_config(b"agent:\n  sandbox:\n    mod: none\n")
    assert config.agent.sandbox.mode == "auto"
    assert any("unknown key 'agent.sandbox.mod'" in w and "agent.sandbox.mode" in w for w in config.warnings)


def test_the_template_documents_the_sandbox_and_its_default_is_auto() -> None:
    from tests.support.helpers import template_dir

    text = (template_dir() / "gitmem.yaml").read_text(encoding="utf-8")
    assert "sandbox:" in text and "bubblewrap" in text
    assert parse_config(text.encode()).agent.sandbox.mode == "auto" == parse_config(b"").agent.sandbox.mode


@pytest.mark.parametrize("named", [False, True], ids=["fresh config", "named in writable"])
def test_the_humans_own_cli_config_is_bound_only_when_writable_names_it(memrepo: GitRepo, tmp_path: Path,
                                                                       named: bool) -> None:
    """An agent that could write ~/.claude or ~/.codex could plant hooks the human's next interactive session
    runs unsandboxed: by default the CLIs get fresh config directories inside the box's HOME."""
    home = tmp_path / "home"
    for folder in (".claude", ".codex"):
        (home / folder).mkdir(parents=True)
    writable = ["~/.claude"] if named else []
    mounts = host_mounts(memrepo.ws(), ["true"], {"PATH": "/usr/bin:/bin"}, writable, agent_files=False,
                         environ={"HOME": str(home)})
    claude, codex = str((home / ".claude").resolve()), str((home / ".codex").resolve())
    assert codex not in mounts.writable and mounts.env["CODEX_HOME"] == f"{HOME}/.codex"
    if named:
        assert claude in mounts.writable and mounts.env["CLAUDE_CONFIG_DIR"] == claude
    else:
        assert claude not in mounts.writable and mounts.env["CLAUDE_CONFIG_DIR"] == f"{HOME}/.claude"
        assert f"{HOME}/.claude" in mounts.made


@pytest.mark.parametrize("named", ["{home}", "{home}/", "{parent}", "{link}", "{home}/.config", "~/.local"])
def test_a_writable_folder_that_is_or_holds_the_home_refuses_the_box(tmp_path: Path, named: str) -> None:
    """The config check refuses `/` and `~` as spelled; the HOME by its own path, a folder above it, or a link to
    it is known only on the machine, and would bind the human's whole HOME read-write."""
    home = tmp_path / "users" / "ada"
    home.mkdir(parents=True)
    (tmp_path / "to-home").symlink_to(home)
    folder = _fake_bwrap(tmp_path / "bin", "exit 0")
    given = named.format(home=home, parent=home.parent, link=tmp_path / "to-home")
    config = parse_config(f"agent:\n  sandbox:\n    mode: auto\n    writable: ['{given}', ~/.cache/x]\n".encode())
    with pytest.raises(sandbox.SandboxUnavailable, match="is the HOME or holds it") as caught:
        sandbox.choose(config, environ={"PATH": folder, "HOME": str(home)})
    assert repr(given) in str(caught.value) and caught.value.exit_code == 3


def test_a_writable_folder_under_the_home_or_beside_it_is_bound() -> None:
    from gitmem.agents.sandbox_mounts import writable_holding_a_home
    environ = {"HOME": "/nonexistent/users/ada"}
    assert writable_holding_a_home(["~/.cache/x", "/nonexistent/users/ada/.npm", "/nonexistent/users/bob",
                                    "/opt/cache"], environ) == []
