"""What the sandbox shows the agent, found on this machine: an allow-list of paths, as plain data (`Mounts`).

Read-only: the system (`/usr`, `/etc`, `/bin` and `/lib*` as links or directories, as the host has them, and the
target of a linked `/etc/resolv.conf`), the Python that runs gitmem (the venv and its base install, and gitmem's own
package, which an editable install keeps elsewhere), the agent CLI's install (the command's program, and one a
wrapper starts by name: `timeout 600 claude`; a `node_modules` tree, else the executable itself, and the interpreter
its `#!` line names, e.g. node's install; a Python venv either of them is in, which a `bin/python` link does not
lead to), the `gitmem` the agent's PATH finds, found as the CLI is (`~/.local/bin/gitmem`), files named on its
command line outside the work tree (absolute, or relative to the tree: `sh ../agent.sh`; one in the tree is the
agent's to make, a link to anywhere), and the git directory with the object stores its alternates name; each git
config file the box shows (`shows`) that holds a credential is shown as a copy without it
(gitmem.agents.box_git_config). Never the
human's HOME, nor a directory holding it, nor one of its data folders (`~/.local`, `~/.config`, `~/.cache`): an
interpreter in `~/bin` or `~/.local/bin` is bound alone. The system's own folders are bound even where a HOME lies
inside one (under /usr), with that HOME covered by an empty folder. A link is made only where no bound directory or
earlier link shows that path already (on a merged-/usr system `/bin/sh` is `/usr/bin/sh`, shown by `/usr` through
the `/bin -> usr/bin` link). The links the CLI and its interpreter are found through on PATH
(`~/.npm-global/bin/codex -> ../lib/node_modules/...`, a `node` linked into `~/.local/bin`) are made again as links,
not bound: a bound link is a copy of its target at the link's path, where node would look for the package's own
modules, and a PATH directory left out would let `#!/usr/bin/env node` find another node inside than outside.

Read-write: the work tree at its own absolute path (agent CLIs key trust by path), `.git/gitmem/` (caches and
locks only, never evidence), a HOME of the sandbox's own in its private /tmp (fresh every run, gone after
it: the runner puts `.git/gitmem` back after every cycle, so a HOME there would only churn), the agent CLIs'
config directories (Claude Code's, through CLAUDE_CONFIG_DIR: `~/.claude.json` is replaced by rename, so
a directory is needed, not a file; Codex's CODEX_HOME), made fresh inside that HOME unless
`agent.sandbox.writable` names the human's own, and the directories `agent.sandbox.writable` names.
"""
from __future__ import annotations

import functools
import os
import pwd
import shutil
import stat
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeVar

import gitmem
from gitmem import gitio
from gitmem.agents import box_git_config, wrappers
from gitmem.agents.ignored_tool_dirs import ENV_FILE, anchor_names, is_env_file
from gitmem.config.user_files import read_settings
from gitmem.workspace import Workspace

_Item = TypeVar("_Item")
HOME = "/tmp/gitmem-home"      # inside the sandbox's private /tmp
# The box HOME's login profile (read-only): a login shell keeps the agent's PATH (see the file).
PROFILE = str(Path(__file__).with_name("box_profile.sh"))
# An empty file, bound read-only where a file anchor (`.env`, `.env.local`…) is absent: tools inside read an
# empty file, and none can be made there. A device (/dev/null) cannot stand in: bwrap binds with nodev, so it
# could not be read.
EMPTY = str(Path(__file__).with_name("box_empty"))
SYSTEM_DIRS = ("/usr", "/etc")
SYSTEM_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")   # links on merged-/usr systems
# Agent CLIs' config directories: (variable, default under the host's HOME). Bound read-write when the host
# has one (a logged-in CLI keeps working), else made in the sandbox's HOME.
AGENT_HOMES = (("CLAUDE_CONFIG_DIR", ".claude"), ("CODEX_HOME", ".codex"))
# Run by root, the agent's uid inside is root outside (gitmem.agents.sandbox ROOT_AGENT_ID), so the owner's bits
# of every root-owned file apply to it: the system's configuration folders are shown as any other user sees them.
# /usr is left out of the walk: 100k entries of programs and data, where the system keeps no secret.
WITHHELD_WALK = 20_000            # entries looked at, at most (/etc holds a few thousand)
# A HOME's folders that hold every program's data, state, settings and caches (the XDG base directories'
# defaults: shell histories, keyrings, tokens, gitmem's backup bundles), never one program's install; and
# ~/.cargo, where installers put single binaries (uv, ruff) beside the registry token (credentials.toml).
HOME_DATA_FOLDERS = (".local", ".config", ".cache", ".cargo")
# env's options that take the next word as their value (a variable to unset, a folder to run in)
GITMEM = "gitmem"              # the command the agent writes memory with, found on its PATH as the agent CLI is
# The keys of a Codex model provider that say where its requests go and with which key.
PROVIDER_KEYS = ("base_url", "env_key", "query_params", "http_headers", "env_http_headers")


@dataclass(frozen=True)
class Mounts:
    """Absolute paths, each bound at the same path inside. The order of binding is `gitmem.agents.sandbox`'s."""

    links: tuple[tuple[str, str], ...] = ()      # (target, link): `/bin -> usr/bin`
    program_links: tuple[tuple[str, str], ...] = ()   # (resolved, link): how the agent CLI is found on PATH
    read_only: tuple[str, ...] = ()              # the system, the runtimes, the agent's files
    covered_homes: tuple[str, ...] = ()          # a HOME inside one of those (under /usr): an empty folder over it
    read_only_in_homes: tuple[str, ...] = ()     # and what is bound from inside such a HOME, after that cover
    writable: tuple[str, ...] = ()               # the host's agent CLI config directories
    optional: tuple[str, ...] = ()               # agent.sandbox.writable: bound when they exist
    work_tree: str = ""
    git_read_only: tuple[str, ...] = ()          # the git directory (and a linked tree's `.git` file), alternates
    # (copy, original): its config files without credentials, and the index taking the tracked ones as unchanged
    git_configs: tuple[tuple[str, str], ...] = ()
    state_dir: str = ""                          # .git/gitmem, read-write again on top of the read-only .git
    home: str = HOME
    made: tuple[str, ...] = (HOME,)               # directories made inside the private /tmp
    profile: str = ""                            # bound read-only as HOME/.profile
    env: dict[str, str] = field(default_factory=dict)   # CLAUDE_CONFIG_DIR, CODEX_HOME: where they were bound
    anchors: tuple[str, ...] = ()                # trust anchors present in the tree: bound read-only, last
    anchor_points: tuple[str, ...] = ()          # absent ones: a read-only empty tmpfs, so none can be made
    anchor_files: tuple[str, ...] = ()           # absent env files (`.env`, `.env.local`): `empty` bound read-only
    empty: str = EMPTY
    withheld_files: tuple[str, ...] = ()         # run by root: system files other users may not read, shown empty
    withheld_dirs: tuple[str, ...] = ()          # and folders they may not enter, shown as empty folders


def host_mounts(ws: Workspace, argv: list[str], env: Mapping[str, str], writable: Iterable[str] = (), *,
                agent_files: bool = True, environ: Mapping[str, str] | None = None) -> Mounts:
    """The mounts for running `argv` (found on `env`'s PATH) over `ws`. `agent_files`: bind the program's
    install and the files its command line names, for a command the human configured (agent.command); never
    for one the agent wrote (run_command), whose arguments could name any file."""
    environ = os.environ if environ is None else environ
    repo = ws.repo
    root = str(ws.root.resolve())
    state = gitio.state_dir(repo)
    state.mkdir(parents=True, exist_ok=True)       # bound read-write: it must exist (a cycle's lock makes it)
    links: list[tuple[str, str]] = []
    system: list[str] = [d for d in SYSTEM_DIRS if os.path.isdir(d)]
    for name in SYSTEM_LINKS:
        if os.path.islink(name):
            links.append((os.readlink(name), name))
        elif os.path.isdir(name):
            system.append(name)
    resolv = os.path.realpath("/etc/resolv.conf")     # Ubuntu links it into /run/systemd/resolve
    if not _under(resolv, system) and os.path.exists(resolv):
        system.append(os.path.dirname(resolv))
    host_home = Path(environ.get("HOME") or os.path.expanduser("~"))
    homes = _homes(host_home)
    system = [item for item in system if item not in homes]
    covered = _covered_homes(system, homes)
    runtime = [*system, *_python_dirs()]
    program_links: list[tuple[str, str]] = []
    if agent_files:
        installs, program_links = _agent_files(argv, env.get("PATH", ""), runtime, homes, root, covered)
        runtime += installs
    # The `gitmem` the agent's PATH finds, which the prompt tells it to run: a user's install puts it in a
    # HOME's folder (`~/.local/bin`: pipx, `uv tool`, `pip --user`), which is never bound whole.
    installs, found_links = _agent_files([GITMEM], env.get("PATH", ""), runtime, homes, root, covered)
    runtime += installs
    program_links += found_links
    # Never a HOME, nor what holds one, nor one of its data folders: a Python installed with `--prefix ~/.local`
    # runs gitmem from there, and its prefix would have shown the agent all of ~/.local (keyrings, histories,
    # gitmem's own refs backups); its lib and bin folders, which are on the way, are bound themselves.
    shared = _data_folders(homes)
    runtime = [item for item in runtime if item in system
               or not (item in shared or any(Path(home).is_relative_to(item) for home in homes))]
    in_homes = [item for item in runtime if _under(item, covered)]
    runtime = [item for item in runtime if item not in in_homes]
    program_links = _new_links(program_links, links, runtime, covered)
    common, own = gitio.common_dir(repo).resolve(), gitio.git_dir(repo).resolve()
    git_read_only = [str(common), *([str(own)] if not own.is_relative_to(common) else [])]
    dot_git = ws.root / ".git"
    if dot_git.is_file():          # a linked work tree's pointer to its git directory: the agent must not move it
        git_read_only.append(str(dot_git.resolve()))
    git_read_only += _alternates(common)
    optional = _writable(writable, host_home)
    bound, made = [], [HOME]
    places: dict[str, str] = {}
    for variable, default in AGENT_HOMES:
        given = _agent_home(variable, default, environ, host_home, optional)
        if given is not None:
            bound.append(given)
            places[variable] = given
        else:
            made.append(f"{HOME}/{default}")
            places[variable] = f"{HOME}/{default}"
    present, absent = _anchor_mounts(Path(root))
    # An absent env file is a mount point only where git ignores it (`.env` always, as the template does): one
    # the agent makes where it is not ignored is in the cycle's commit, and a placeholder there would show as
    # an untracked file to everything that runs `git status` inside.
    absent_files = tuple(place for place in absent if is_env_file(name := Path(place).name)
                         and (name == ENV_FILE or gitio.path_ignored(repo, name)))
    absent = tuple(place for place in absent if not is_env_file(Path(place).name))
    files, folders = _withheld(tuple(d for d in system if d not in ("/usr", *SYSTEM_LINKS))) if os.geteuid() == 0 \
        else ([], [])
    mounts = Mounts(links=tuple(links), program_links=tuple(_unique(program_links)),
                    read_only=tuple(_outermost(runtime)), covered_homes=covered,
                    read_only_in_homes=tuple(_outermost(in_homes)), writable=tuple(_unique(bound)),
                    optional=tuple(_unique(optional)), work_tree=root, git_read_only=tuple(_unique(git_read_only)),
                    state_dir=str(state.resolve()), made=tuple(made), env=places, anchors=present,
                    profile=PROFILE if os.path.isfile(PROFILE) else "",
                    anchor_points=absent,
                    anchor_files=absent_files, withheld_files=tuple(files), withheld_dirs=tuple(folders))
    # Every git config file the box shows at all, without its credentials (each one bound last, over all else)
    return replace(mounts, git_configs=box_git_config.shown_copies(repo, functools.partial(shows, mounts)))


def shows(mounts: Mounts, path: str) -> bool:
    """Whether the box shows the agent the host's file `path` (a real path) at that same path: under a folder it
    binds, neither withheld from root's agent nor in a HOME the box covers (unless bound again from there)."""
    if path in mounts.withheld_files or _under(path, mounts.withheld_dirs):
        return False
    if _under(path, mounts.read_only_in_homes):
        return True
    return not _under(path, mounts.covered_homes) and _under(path, [
        *mounts.read_only, *mounts.writable, *mounts.optional, mounts.work_tree, *mounts.git_read_only,
        mounts.state_dir, *mounts.anchors])


def hidden_config(writable: Iterable[str], environ: Mapping[str, str] | None = None) -> list[str]:
    """What the human's own agent CLI config sets that the box hides from the CLI (`_hidden_config`), for the
    config directories the box gives the CLI fresh: said before the agent starts, and in its Evidence."""
    environ = os.environ if environ is None else environ
    host_home = Path(environ.get("HOME") or os.path.expanduser("~"))
    found: list[str] = []
    for variable in fresh_config_dirs(writable, environ):
        default = dict(AGENT_HOMES)[variable]
        found += _hidden_config(variable, Path(environ[variable]) if environ.get(variable) else host_home / default)
    return found


def fresh_config_dirs(writable: Iterable[str], environ: Mapping[str, str] | None = None) -> list[str]:
    """The variables of AGENT_HOMES (CLAUDE_CONFIG_DIR, CODEX_HOME) whose directory the box gives the CLI fresh,
    the human's own left out: inside, the CLI reads none of the human's config there (`_agent_home`)."""
    environ = os.environ if environ is None else environ
    host_home = Path(environ.get("HOME") or os.path.expanduser("~"))
    optional = _writable(writable, host_home)
    return [variable for variable, default in AGENT_HOMES
            if _agent_home(variable, default, environ, host_home, optional) is None]


def _writable(writable: Iterable[str], host_home: Path) -> list[str]:
    """agent.sandbox.writable as absolute paths (`~/` is the host's HOME)."""
    return [(str(host_home / d[2:]) if d.startswith("~/") else d).rstrip("/") for d in writable]


def writable_holding_a_home(writable: Iterable[str], environ: Mapping[str, str] | None = None) -> list[str]:
    """The folders of agent.sandbox.writable that are `/`, a HOME or a folder holding one, or one of a HOME's
    data folders (`~/.config`: HOME_DATA_FOLDERS), as the paths they resolve to name them: the config check
    refuses `/` and `~` as spelled, but only this machine knows that `/root` or `/home` (or a link to either)
    is where its HOME lives. Bound read-write, such a folder would give the agent the human's keys, shell
    startup files, every program's settings and tokens, and every other repository."""
    environ = os.environ if environ is None else environ
    host_home = Path(environ.get("HOME") or os.path.expanduser("~"))
    found = _homes(host_home)
    homes, shared = [Path(home) for home in found], _data_folders(found)
    held, named_all = [], list(writable)
    for named, folder in zip(named_all, _writable(named_all, host_home), strict=True):
        real = Path(os.path.realpath(folder or "/"))
        if real == Path("/") or str(real) in shared or any(home.is_relative_to(real) for home in homes):
            held.append(named)
    return held


def _agent_home(variable: str, default: str, environ: Mapping[str, str], host_home: Path,
                optional: list[str]) -> str | None:
    """The human's own CLI config directory (~/.claude, ~/.codex, or where `variable` says), resolved, when the
    box binds it: only when agent.sandbox.writable names it, because an agent that can write it could plant
    hooks or settings that run unsandboxed in the human's next interactive session. None: the CLI gets a
    fresh one inside the box's HOME."""
    given = Path(environ[variable]) if environ.get(variable) else host_home / default
    chosen = {os.path.realpath(d) for d in optional}
    if given.is_absolute() and given.is_dir() and os.path.realpath(given) in chosen:
        return str(given.resolve())
    return None


def _hidden_config(variable: str, given: Path) -> list[str]:
    """What the human's own config directory of an agent CLI, left out of the box, sets that changes where the
    CLI sends its requests: inside, the CLI starts fresh and goes to its default provider, which on a machine
    that reaches only the human's endpoint hangs until the cycle's timeout with nothing said. Names only,
    never values (a URL or a helper's command line can hold a credential)."""
    named: list[str] = []
    if variable == "CODEX_HOME":
        data = read_settings(given / "config.toml", "toml")
        provider = data.get("model_provider")
        if isinstance(provider, str) and provider != "openai":
            entry = (data.get("model_providers") or {}).get(provider)
            keys = sorted(k for k in (entry if isinstance(entry, dict) else {}) if k in PROVIDER_KEYS)
            env_key = entry.get("env_key") if isinstance(entry, dict) else None
            said = f"model_provider `{provider}`" + (f" (its {', '.join(keys)})" if keys else "")
            named.append(said + (f", whose key is {env_key}" if isinstance(env_key, str) else ""))
        named += [f"`{key}`" for key in sorted(data) if key.endswith("base_url") or key == "profile"]
    else:
        data = read_settings(given / "settings.json", "json")
        env = data.get("env")
        named += [f"env {name}" for name in sorted(env if isinstance(env, dict) else {})
                  if name.endswith(("BASE_URL", "_TOKEN", "_API_KEY")) or name.startswith("CLAUDE_CODE_USE_")]
        named += [f"`{key}`" for key in ("apiKeyHelper",) if key in data]
    if not named:
        return []
    return [f"the box hides {variable} ({given}) from the agent CLI, and it sets {'; '.join(named)}: inside, the "
            f"CLI has a fresh {variable} and its default provider. Name {given} in agent.sandbox.writable, or "
            "give the CLI those settings on its command line or in agent.pass_env"]


@functools.cache
def _withheld(folders: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """The files under `folders` that other users may not read, and the folders they may not enter (not
    looked into): /etc/shadow, the host's SSH keys, /etc/ssl/private. Links are left alone (their targets
    are judged where they are bound). Walked once per process: every `run_command` of a cycle makes a box, and
    the system's files do not change under it (the box binds them read-only)."""
    files: list[str] = []
    dirs: list[str] = []
    seen = 0
    for top in folders:
        for folder, subdirs, names in os.walk(top):
            kept = []
            for name in [*subdirs, *names]:
                seen += 1
                place = os.path.join(folder, name)
                try:
                    mode = os.lstat(place).st_mode
                except OSError:
                    continue
                if stat.S_ISDIR(mode):
                    if mode & stat.S_IXOTH:
                        kept.append(name)
                    else:
                        dirs.append(place)
                elif stat.S_ISREG(mode) and not mode & stat.S_IROTH:
                    files.append(place)
            subdirs[:] = [d for d in subdirs if d in kept]
            if seen >= WITHHELD_WALK:
                return files, dirs
    return files, dirs


def _anchor_mounts(root: Path) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The trust anchors (gitmem.agents.ignored_tool_dirs) as mounts. A link to a place inside the tree is bound there
    (where the agent could write it); a link out of the tree is left alone: the box does not show its target
    (or shows it read-only), and replacing the link itself is what the runner's look after the agent reports."""
    present: list[str] = []
    absent: list[str] = []
    for name in anchor_names(root):
        place = root / name
        if not os.path.lexists(place):
            absent.append(str(place))
            continue
        real = Path(os.path.realpath(place))
        if real.exists() and real.is_relative_to(root) and real != root:
            present.append(str(real))
    return tuple(_unique(present)), tuple(absent)


def _python_dirs() -> list[str]:
    """The interpreter running gitmem, its venv, what its import path holds (site-packages, and what `.pth`
    files add, such as an editable install's source) and gitmem's own package: `gitmem log add` inside the
    sandbox is this same installation. What this user cannot read could not be bound anyway."""
    found = [sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix,
             os.path.dirname(os.path.realpath(sys.executable)), os.path.dirname(os.path.abspath(gitmem.__file__)),
             *(entry for entry in sys.path if os.path.isabs(entry))]
    return [os.path.realpath(d) for d in found
            if os.path.isdir(d) and os.access(d, os.R_OK | os.X_OK) and os.path.realpath(d) != "/"]


def _agent_files(argv: list[str], path: str, bound: list[str], homes: set[str], root: str,
                 covered: tuple[str, ...] = ()) -> tuple[list[str], list[tuple[str, str]]]:
    """The agent CLI's install (a node_modules tree, else its executable; the command's first word, and each bare word
    of it found on PATH, which a wrapper runs), the interpreter its `#!` line names (node's install), and files
    named on its command line outside the tree (`python /opt/agent/run.py`, and `sh ../agent.sh`, relative to the
    work tree where the command runs: `_in_tree`); and the links the CLI, the interpreter and those files are found
    through, (resolved, link). Never a HOME (`homes`): an interpreter in `~/bin` is bound alone. What lies in a
    `covered` HOME is bound itself, though a bound folder holds it."""
    found: list[str] = []
    linked: list[str] = []
    programs: list[str] = []
    if argv:
        named = argv[0] if os.sep not in argv[0] else os.path.join(root, argv[0])
        programs.append(shutil.which(named, path=path) or "")
    # A program the command hands on to by name (`timeout 600 claude`, `env VAR=x codex`, `nice`, `npx`): a
    # bare word found on PATH, found as the wrapper will find it inside; not one found in the tree (a PATH
    # with `.`), which is the agent's to make.
    programs += [found_on for word in argv[1:] if word and os.sep not in word and not word.startswith("-")
                 for found_on in [shutil.which(word, path=path)]
                 if found_on and not _in_tree(os.path.abspath(found_on), root)]
    for program in filter(None, programs):
        real = os.path.realpath(program)
        found.append(_package_root(real))
        linked.append(os.path.abspath(program))
        interpreter = _interpreter(real, path)
        if interpreter is not None:
            found.append(_install_root(os.path.realpath(interpreter), homes))
            linked.append(interpreter)
        # A venv's python is a link to the base interpreter: its packages are found from the link's own place.
        found += [venv for venv in (_venv(os.path.abspath(program)), _venv(interpreter) if interpreter else None)
                  if venv]
    named_files = [os.path.join(root, arg) for arg in argv[1:]]      # an absolute `arg` stays as it is
    # A word that names a place in the tree names what the agent may make there: a link `json` (a word of the
    # template's command) to the human's credentials would be bound. The tree is bound already; only a file
    # the human names outside it is.
    named_files = [arg for arg in named_files if not _in_tree(arg, root) and os.path.isfile(arg)]
    found += [os.path.realpath(arg) for arg in named_files]
    linked += [os.path.abspath(arg) for arg in named_files]
    installs = [item for item in found if item != "/" and (not _under(item, bound) or _under(item, covered))]
    return installs, [link for place in linked for link in _links_on(place)]


def _in_tree(path: str, root: str) -> bool:
    """Whether `path` (absolute, as named) reaches a place inside the work tree `root` on its way, where the
    agent decides what is there: it ends there (`json`, even as a link out of the tree), or goes through it
    (`sub/../../x`, `sub` a link), or through a link to it. The tree itself is the human's (`../agent.sh`)."""
    parts = Path(path).parts
    for cut in range(2, len(parts) + 1):
        if parts[cut - 1] in (".", ".."):
            continue
        place = Path(os.path.realpath(Path(*parts[:cut - 1]))) / parts[cut - 1]    # the entry itself not followed
        if place != Path(root) and place.is_relative_to(root):
            return True
    return False


def _links_on(path: str) -> list[tuple[str, str]]:
    """Each link `path` goes through, its own last part included, as (resolved, link), outermost first: a file
    bound where it really is is found inside by the path that names it (`../agents/run.sh`, `agents` a link
    to a folder; `~/.local/bin/codex`, a link to the CLI's package)."""
    parts = Path(path).parts
    places = (str(Path(*parts[:cut])) for cut in range(2, len(parts) + 1))
    return [(os.path.realpath(place), place) for place in places if os.path.islink(place)]


def _new_links(wanted: Iterable[tuple[str, str]], made: Iterable[tuple[str, str]], bound: Iterable[str],
               covered: Iterable[str] = ()) -> list[tuple[str, str]]:
    """The links of `wanted` the box must still make: one whose place, followed through the links the box
    makes first (`made`: `/bin -> usr/bin`), is already shown by a bound directory (`/bin/sh` is `/usr/bin/sh`
    on a merged-/usr system) or by a link made before it is left out, because bwrap cannot make a link where
    a file or link is already (\"Can't make symlink at /bin/sh: File exists\"), nor inside a read-only bind. A
    place in a `covered` HOME is not shown by the folder that holds it: the cover hides it."""
    made = list(made)
    bound = list(bound)
    covered = list(covered)
    shown = {_through(link, made) for _target, link in made}
    kept: list[tuple[str, str]] = []
    for target, link in wanted:
        place = _through(link, made)
        if place in shown or (_under(place, [*bound, *shown]) and not _under(place, covered)):
            continue
        shown.add(place)
        kept.append((target, link))
    return kept


def _through(path: str, links: Iterable[tuple[str, str]]) -> str:
    """Where `path` is inside the box, when each (target, link) of `links` is a link there: `/bin/sh` ->
    `/usr/bin/sh` where `/bin` is a link to `usr/bin`. A link's own last part is not followed."""
    leads = {link: os.path.normpath(os.path.join(os.path.dirname(link), target)) for target, link in links}
    parts = Path(path).parts
    for _ in range(40):                  # a loop of links ends here, as the kernel's ELOOP would
        for cut in range(len(parts) - 1, 0, -1):
            head = str(Path(*parts[:cut]))
            if head in leads:
                parts = Path(leads[head], *parts[cut:]).parts
                break
        else:
            break
    return str(Path(*parts))


def _package_root(real: str) -> str:
    """The outermost `node_modules` tree holding `real` (the CLI's dependencies are there too), else `real`."""
    parts = Path(real).parts
    if "node_modules" in parts:
        return str(Path(*parts[: parts.index("node_modules") + 1]))
    return real


def _interpreter(real: str, path: str) -> str | None:
    try:
        with open(real, "rb") as handle:
            first = handle.readline(256)
    except OSError:
        return None
    if not first.startswith(b"#!"):
        return None
    words = first[2:].decode("utf-8", "replace").split()
    if not words:
        return None
    if os.path.basename(words[0]) == "env":      # found on PATH, as `env` will inside: the path, unresolved
        program = _env_program(words[1:])
        program = shutil.which(program, path=path) if program else None
        return os.path.abspath(program) if program else None
    return words[0] if os.path.isabs(words[0]) else None


def _env_program(words: list[str]) -> str | None:
    """The program `env` runs, from the words after it on a `#!` line (`env -S NODE_OPTIONS=... node`)."""
    program, _ = wrappers.unwrapped(["env", *words])
    return program[0] if program else None


def _install_root(program: str, homes: set[str]) -> str:
    """`/opt/node/bin/node` -> `/opt/node` (its lib/ holds what it loads); else the program's directory; the
    program alone where that would be a HOME or hold one (`~/bin/node`: HOME holds the human's credentials), or
    be one of a HOME's folders every program keeps its data in (`~/.local/bin/mise` -> `~/.local`)."""
    folder = os.path.dirname(program)
    root = os.path.dirname(folder) if os.path.basename(folder) == "bin" else folder
    return program if root in _data_folders(homes) or any(Path(home).is_relative_to(root) for home in homes) else root


def _venv(program: str) -> str | None:
    """The Python venv `program` (as named, links not followed) lies in: `<venv>/bin/python` beside a
    `<venv>/pyvenv.cfg`, the file by which Python, started through that path, finds the venv's packages
    (pipx, `uv tool`, a project's venv). None outside a venv. One that is or holds a HOME is dropped with every
    other install that does (`host_mounts`)."""
    folder = os.path.dirname(os.path.dirname(program))
    return os.path.realpath(folder) if os.path.isfile(os.path.join(folder, "pyvenv.cfg")) else None


def _data_folders(homes: set[str]) -> set[str]:
    """The folders of each HOME that hold every program's data (HOME_DATA_FOLDERS), as absolute paths."""
    return {os.path.join(home, name) for home in homes for name in HOME_DATA_FOLDERS}


def _covered_homes(system: list[str], homes: set[str]) -> tuple[str, ...]:
    """The HOMEs that lie inside one of the system's folders (a HOME under /usr: `/usr/local/home/ada`, a
    service user's `/usr/share/app`), and exist. Every other folder that holds a HOME is left out of the box;
    the system's are bound all the same, for nothing could start in the box without /usr, and an empty folder
    covers each such HOME (`bwrap_argv`), so the agent sees none of it."""
    return tuple(sorted(home for home in homes if os.path.isdir(home)
                        and any(home != item and Path(home).is_relative_to(item) for item in system)))


def _homes(host_home: Path) -> set[str]:
    """The human's HOME, as the runner's environment names it and as the user database does (they can
    differ: `sudo -E`, a HOME set for a tool), resolved: the box binds neither, nor anything holding them."""
    found = {os.path.realpath(host_home)}
    try:
        found.add(os.path.realpath(pwd.getpwuid(os.geteuid()).pw_dir))
    except KeyError:               # a uid without an entry (a container's arbitrary user)
        pass
    return {home for home in found if home != "/"}


def _alternates(common: Path) -> list[str]:
    """The object stores `objects/info/alternates` names (absolute, or relative to the objects directory)."""
    objects = common / "objects"
    try:
        lines = (objects / "info" / "alternates").read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []
    found = [os.path.realpath(objects / line.strip()) for line in lines if line.strip() and not line.startswith("#")]
    return [item for item in found if os.path.isdir(item) and not Path(item).is_relative_to(common)]


def _under(path: str, folders: Iterable[str]) -> bool:
    return any(Path(path).is_relative_to(folder) for folder in folders)


def _outermost(items: Iterable[str]) -> list[str]:
    """`items` without duplicates and without those inside another one (bound with it already)."""
    unique = _unique(items)
    return [item for item in unique if not any(other != item and Path(item).is_relative_to(other) for other in unique)]


def _unique(items: Iterable[_Item]) -> list[_Item]:
    return list(dict.fromkeys(items))
