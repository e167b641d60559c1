"""The bubblewrap sandbox of the `command` agent and the `run_command` tool (`agent.sandbox`).

The agent is untrusted: without a box it could read a withheld secret from the runner's `/proc/PID/environ`,
delete the human's branches and `git gc --prune=now` them away, write another workspace's memory, or push to a
local-path origin. Inside `bwrap` it sees an allow-list of paths (gitmem.agents.sandbox_mounts): the work tree
read-write, `.git` read-only but for `.git/gitmem/`, so only the runner commits, writes references and runs gc
(its config files shown without credentials: gitmem.agents.box_git_config); a private /tmp; its own PID
namespace with its own /proc, so no runner process is visible; its own session, so no
terminal of the runner's to type into; its own user namespace
with no capability, also when root runs the cycle (containers, CI), so it cannot remount a read-only bind, make a
device node or mount a disk, and where root runs it, the system's configuration shows it only what other users
may read (its uid inside is root outside: sandbox_mounts `_withheld`); and an environment of named variables
only. The network stays open: the agent needs its model's API. What the human's own agent CLI config sets that
the box hides (a Codex model provider in CODEX_HOME) is said before the agent starts (`start_notes`).

Modes: `bubblewrap` refuses to start the cycle where `bwrap` is missing or cannot make its namespaces (exit 3,
with the install line, or bwrap's own words and the kernel setting that refuses the namespace); `auto` (the
default) falls back to no sandbox and says so in the LOG entry's Evidence; `none` runs the agent as a plain
process. `bwrap` is probed once per process.
"""
from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gitmem.agents.sandbox_mounts import (
    HOME_DATA_FOLDERS,
    Mounts,
    fresh_config_dirs,
    hidden_config,
    host_mounts,
    writable_holding_a_home,
)
from gitmem.errors import ExitCode, GitmemError
from gitmem.workspace import Workspace

INSTALL = "sudo apt-get install bubblewrap"
DATA_FOLDERS = f"data folders ({', '.join('~/' + name for name in HOME_DATA_FOLDERS)})"
USERNS_HINT = ("on Ubuntu 24.04 AppArmor restricts unprivileged user namespaces: sudo sysctl -w "
               "kernel.apparmor_restrict_unprivileged_userns=0 (or give bwrap an AppArmor profile)")
PROBE_SECONDS = 10.0
SYSCTL = Path("/proc/sys")
# bwrap's words when the kernel refuses it a namespace (rather than, say, a path it cannot bind).
NAMESPACE_REFUSED = ("No permissions to create new namespace", "Creating new namespace failed",
                     "setting up uid map", "setting up gid map", "unshare")
# (setting under /proc/sys, the value that refuses unprivileged user namespaces, the fix), the likeliest first.
USERNS_SETTINGS = (("kernel/apparmor_restrict_unprivileged_userns", "1", USERNS_HINT),
                   ("kernel/unprivileged_userns_clone", "0", "unprivileged user namespaces are off: sudo sysctl "
                    "-w kernel.unprivileged_userns_clone=1"),
                   ("user/max_user_namespaces", "0", "user namespaces are off: sudo sysctl -w "
                    "user.max_user_namespaces=15000"))
# The uid and gid root's agent has inside its user namespace: bwrap run by root keeps every capability unless
# told otherwise (the agent could remount a read-only bind read-write, make a device node, mount the host's
# disk), so the box always gets a user namespace of its own and drops every capability. Not 0: bwrap, and so
# an agent CLI's own bubblewrap nested inside, treats uid 0 as privileged and would not make a user namespace
# of its own there. Files the agent makes are still root's outside; root's files look like its own inside.
ROOT_AGENT_ID = 1000
# The variables the agent keeps besides `GITMEM_*`, LC_* and what the caller names (agent.pass_env, the model);
# NO_PROXY, so a forward proxy agent.pass_env passes is not asked for the runner's loopback key endpoint.
KEPT_ENV = ("PATH", "LANG", "TERM", "TZ", "NO_PROXY", "no_proxy")
# Where the agent CLI sends its model's requests (the runner's key proxy, gitmem.agents.key_stand_in, where it
# stands in for the key agent.pass_env gives): dropped,
# Claude Code or Codex would send that key to its default host instead of the one the human chose, and a
# cycle under `auto` would reach another endpoint on a machine with bwrap than on one without.
ENDPOINT_ENV = ("ANTHROPIC_BASE_URL", "OPENAI_BASE_URL", "GOOGLE_GEMINI_BASE_URL")


class SandboxUnavailable(GitmemError):
    """`agent.sandbox: bubblewrap`, and bwrap is missing or cannot run here; the message says how to fix it.
    `key`: the gitmem.yaml setting to change, which the cycle's refusal points at."""

    exit_code = ExitCode.DIRTY

    def __init__(self, message: str, *, key: str = "agent.sandbox.mode") -> None:
        super().__init__(message)
        self.key = key


@dataclass(frozen=True)
class SandboxChoice:
    """The mode that runs (`bubblewrap` or `none`), the bwrap to run, and the line for the LOG's Evidence."""

    mode: str
    bwrap: str = ""
    note: str = ""

    def wrap(self, argv: list[str], env: Mapping[str, str], *, workspace: Workspace, keep: Iterable[str] = (),
             writable: Iterable[str] = (), agent_files: bool = True) -> tuple[list[str], dict[str, str]]:
        """`argv` and `env` as they run: unchanged without a sandbox, else inside bwrap with only the
        variables KEPT_ENV, ENDPOINT_ENV, `GITMEM_*`, LC_* and `keep` name. `agent_files`: see `host_mounts`."""
        if self.mode != "bubblewrap":
            return list(argv), dict(env)
        mounts = host_mounts(workspace, argv, env, writable, agent_files=agent_files)
        return bwrap_argv(self.bwrap, mounts, argv), confined_environment(env, mounts, keep=keep)


def tree_problem(ws: Workspace, *, euid: int | None = None, environ: Mapping[str, str] | None = None) -> str | None:
    """Why the box cannot give the agent the work tree of `ws`, or None. A tree that is the HOME or holds it (a
    notes or dotfiles repository), or is one of its data folders (`~/.config` kept as a repository), would give
    the agent the HOME, or every program's settings and tokens, read-write, which the box never does. Run by
    root, the agent is root outside but holds no capability inside, and none would reach a file whose owner the
    box does not map: in a tree another user owns (a container's bind-mounted checkout, GitHub's container
    jobs, `sudo gitmem cycle`) it could write nothing, and bwrap could not make its mount points (the absent
    trust anchors)."""
    if writable_holding_a_home([str(ws.root)], environ):
        return (f"the box cannot keep the HOME from the agent: the work tree {ws.root} is the HOME or holds it, "
                f"or is one of the HOME's {DATA_FOLDERS}, on this machine, and the box gives the agent the work "
                "tree read-write (keys, shell startup files, every program's settings, every other repository); "
                "keep the memory repository in a folder of its own, or set agent.sandbox: none in gitmem.yaml")
    if (os.geteuid() if euid is None else euid) != 0:
        return None
    for folder in dict.fromkeys([ws.root, ws.root / ws.config.memory_dir]):
        try:
            owner = folder.stat().st_uid
        except OSError:
            continue
        if owner != 0:
            return (f"the box cannot give the agent the work tree: {folder} is owned by uid {owner} and the cycle "
                    "runs as root, whose agent holds no capability in the box, so it could write nothing there; "
                    f"run the cycle as that user (say `sudo -u '#{owner}' gitmem cycle`), give the tree to root, "
                    "or set agent.sandbox: none in gitmem.yaml")
    return None


def hidden(box: SandboxChoice, writable: Iterable[str]) -> list[str]:
    """What the box hides that the agent CLI's own config sets (where its requests go): nothing without a box."""
    return hidden_config(writable) if box.mode == "bubblewrap" else []


def fresh_homes(box: SandboxChoice, writable: Iterable[str],
                environ: Mapping[str, str] | None = None) -> frozenset[str]:
    """The agent CLIs' config variables (CODEX_HOME, CLAUDE_CONFIG_DIR) the box gives a fresh directory, so the
    CLI reads nothing of the human's there: none without a box."""
    return frozenset(fresh_config_dirs(writable, environ)) if box.mode == "bubblewrap" else frozenset()


def start_notes(config: Any, backend: str) -> list[str]:
    """What to say before a cycle of `backend` starts: what the box hides from the command agent's CLI."""
    if backend != "command":
        return []
    try:
        return hidden(choose(config), config.agent.sandbox.writable)
    except SandboxUnavailable:        # the runner refuses the cycle, and says why
        return []


def needed(config: Any, backend: str) -> bool:
    """Whether a cycle of `backend` runs commands the sandbox confines: the command agent, or run_command."""
    return backend == "command" or bool(config.agent.shell.enabled)


def confines_disk(config: Any, backend: str) -> bool:
    """Whether every way a cycle of `backend` has to the disk keeps the trust anchors read-only: the commands
    it runs are in the box (or it runs none), and the in-process file tools of `anthropic` refuse them. The
    runner then looks at each anchor itself only, not into it (gitmem.agents.ignored_tool_dirs)."""
    if backend not in ("command", "anthropic"):
        return False
    if not needed(config, backend):
        return True
    try:
        return choose(config).mode == "bubblewrap"
    except SandboxUnavailable:
        return False


def choose(config: Any, *, environ: Mapping[str, str] | None = None) -> SandboxChoice:
    """The sandbox `agent.sandbox` asks for, as this machine can give it; SandboxUnavailable for
    `bubblewrap` where bwrap cannot run."""
    mode = config.agent.sandbox.mode
    if mode == "none":
        return SandboxChoice("none", note="sandbox: none (agent.sandbox: none): the agent ran as a plain process")
    environ = os.environ if environ is None else environ
    found = shutil.which("bwrap", path=environ.get("PATH", os.defpath))
    problem = (f"bwrap is not on PATH; install it: {INSTALL}" if found is None else _probe(found))
    if problem is None and found is not None:
        held = writable_holding_a_home(config.agent.sandbox.writable, environ)
        if held:
            raise SandboxUnavailable(f"agent.sandbox.writable names {held[0]!r}, which is the HOME or holds it, "
                                     f"or is one of the HOME's {DATA_FOLDERS}, on this machine: the box would give "
                                     "the agent all of it read-write; name the folders under it the agent needs "
                                     "(say ~/.cache/tool) in gitmem.yaml", key="agent.sandbox.writable")
        return SandboxChoice("bubblewrap", found, note="sandbox: bubblewrap: the agent saw the work tree, a read-only "
                             ".git and a private /tmp, in its own PID namespace")
    if mode == "bubblewrap":
        raise SandboxUnavailable(f"agent.sandbox is bubblewrap, and {problem}; or set agent.sandbox: auto (falls "
                                 "back to no sandbox) or none in gitmem.yaml")
    return SandboxChoice("none", note=f"sandbox: none (agent.sandbox: auto, and {problem}): the agent ran as a plain "
                                      "process")


@functools.cache
def _probe(bwrap: str) -> str | None:
    """Why `bwrap` cannot make a sandbox here, or None when it can (once per process)."""
    try:
        done = subprocess.run([bwrap, *unprivileged(os.geteuid()), "--ro-bind", "/", "/", "true"], text=True,
                              capture_output=True, timeout=PROBE_SECONDS, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"{bwrap} cannot run ({getattr(err, 'strerror', None) or err}); install it: {INSTALL}"
    if done.returncode == 0:
        return None
    return why_not(bwrap, done.returncode, done.stderr)


def why_not(bwrap: str, code: int, stderr: str) -> str:
    """What stopped the probe, from bwrap's own words (its lines begin `bwrap:`; anything else on stderr, such
    as a preloaded library's complaint, is not the failure), and for a user namespace refused, the setting of
    this machine that refuses it, read from /proc/sys: AppArmor's is blamed only where it is on."""
    own = [" ".join(line.split()) for line in stderr.splitlines() if line.startswith("bwrap:")]
    said = own[-1][:200] if own else f"exit {code}, and bwrap said nothing of its own"
    if not own or not any(sign in own[-1] for sign in NAMESPACE_REFUSED):
        return f"{bwrap} cannot make the box ({said})"
    return f"{bwrap} cannot create its namespaces ({said}); {_userns_setting()}"


def _userns_setting() -> str:
    """The machine's setting that refuses an unprivileged user namespace, with the line that allows it."""
    for name, refusing, fix in USERNS_SETTINGS:
        try:
            value = (SYSCTL / name).read_text(encoding="ascii").strip()
        except (OSError, UnicodeDecodeError):
            continue
        if value == refusing:
            return fix
    return ("this machine refuses user namespaces to this process, and no kernel setting says so (a "
            "container's seccomp profile, or a user namespace limit of its own)")


def confined_environment(env: Mapping[str, str], mounts: Mounts, *, keep: Iterable[str] = ()) -> dict[str, str]:
    """The agent's whole environment: the allow-list, HOME and TMPDIR inside the box, the agent CLIs' config
    directories. `env` is scrubbed already (gitmem.secrets.agent_environment): a key reaches the box only when
    agent.pass_env names it. It is given to bwrap itself, not set with --setenv on its command line: a command
    line is readable by every user of the machine (/proc/PID/cmdline), and bwrap's own environment is what the
    agent would find at /proc/1/environ inside (bwrap is PID 1 of the new namespace)."""
    named = set(KEPT_ENV) | set(ENDPOINT_ENV) | set(keep)
    kept = {name: value for name, value in env.items()
            if name in named or name.startswith(("GITMEM_", "LC_"))}
    if "GIT_DIR" in env:           # a repository found through GIT_DIR (open_repo): the agent's git finds it too
        kept["GIT_DIR"], kept["GIT_WORK_TREE"] = env["GIT_DIR"], env.get("GIT_WORK_TREE", mounts.work_tree)
    # The PATH a login shell's profile puts back (gitmem/agents/box_profile.sh).
    start_path = {"GITMEM_AGENT_PATH": kept["PATH"]} if mounts.profile and "PATH" in kept else {}
    return {**kept, "HOME": mounts.home, "TMPDIR": "/tmp", **mounts.env, **start_path}


def unprivileged(euid: int) -> list[str]:
    """bwrap's options that leave the agent no privilege, whoever runs it: a user namespace of its own and no
    capability; run by root, the agent is ROOT_AGENT_ID inside (see there)."""
    ids = [] if euid else ["--uid", str(ROOT_AGENT_ID), "--gid", str(ROOT_AGENT_ID)]
    return ["--unshare-user", *ids, "--cap-drop", "ALL"]


def bwrap_argv(bwrap: str, mounts: Mounts, argv: list[str], *, euid: int | None = None) -> list[str]:
    """The bwrap command line. Order matters: a later bind covers an earlier one, so the work tree is bound
    read-write, then `.git` read-only over it, then `.git/gitmem` read-write over that; runtimes that live
    inside the work tree (a venv in the checkout) are bound read-only, so the agent cannot edit gitmem; and
    then the trust anchors (`.venv`, `.direnv`, the `.env` files), read-only whether or not gitmem runs from them:
    an absent one as an empty read-only tmpfs (a file anchor: an empty file), so the agent cannot create one for the
    human's next session to run; and last the git config files' copies without credentials (with the index's
    copy that takes the tracked ones as unchanged), over whichever of those binds shows the original. `euid`
    (this process's by default) chooses the agent's ids (`unprivileged`)."""
    tree = Path(mounts.work_tree)
    outside = [d for d in mounts.read_only if not Path(d).is_relative_to(tree)]
    inside = [d for d in (*mounts.read_only, *mounts.read_only_in_homes) if Path(d).is_relative_to(tree)]
    # --new-session: the agent's program gets a session of its own, with no controlling terminal. In the runner's
    # (a human's `gitmem cycle` in a shell, whose run_command tool would share it) it could open /dev/tty and push
    # input with TIOCSTI that the human's shell runs after gitmem exits, outside the box (CVE-2017-5226).
    out = [bwrap, "--die-with-parent", "--unshare-pid", "--new-session",
           *unprivileged(os.geteuid() if euid is None else euid)]
    for target, link in mounts.links:
        out += ["--symlink", target, link]
    out += ["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]
    for folder in mounts.made:
        out += ["--dir", folder]
    if mounts.profile:
        out += ["--ro-bind", mounts.profile, f"{mounts.home}/.profile"]
    for folder in outside:
        out += ["--ro-bind", folder, folder]
    for home in mounts.covered_homes:           # a HOME inside a bound system folder: an empty folder over it
        out += ["--tmpfs", home]
    for folder in mounts.read_only_in_homes:
        if not Path(folder).is_relative_to(tree):
            out += ["--ro-bind", folder, folder]
    for path in mounts.withheld_files:          # over the system's read-only bind: shown empty
        out += ["--ro-bind", os.devnull, path]
    for folder in mounts.withheld_dirs:
        out += ["--tmpfs", folder, "--remount-ro", folder]
    for target, link in mounts.program_links:     # after the read-only binds that hold their targets
        out += ["--symlink", target, link]
    for folder in mounts.writable:
        out += ["--bind", folder, folder]
    for folder in mounts.optional:
        out += ["--bind-try", folder, folder]
    out += ["--bind", mounts.work_tree, mounts.work_tree]
    for folder in mounts.git_read_only:
        out += ["--ro-bind", folder, folder]
    out += ["--bind", mounts.state_dir, mounts.state_dir]
    for folder in inside:
        out += ["--ro-bind", folder, folder]
    # the trust anchors (gitmem.agents.ignored_tool_dirs): read-only, present or not
    for folder in mounts.anchors:
        out += ["--ro-bind", folder, folder]
    for folder in mounts.anchor_points:
        out += ["--tmpfs", folder, "--remount-ro", folder]
    for path in mounts.anchor_files:
        out += ["--ro-bind", mounts.empty, path]
    # Last, over every bind that shows them (the git directory, the work tree, /etc): each git config file
    # without its credentials, and the index that takes the tracked ones as unchanged
    # (gitmem.agents.box_git_config)
    for copy, original in mounts.git_configs:
        out += ["--ro-bind", copy, original]
    return [*out, "--chdir", mounts.work_tree, "--", *argv]
