"""`gitmem init`: create whatever memory scaffolding is missing; never overwrite; merge pre-commit hooks and
.gitignore; optionally install the plain git hooks."""
from __future__ import annotations

import os
import shlex
import shutil
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from gitmem import install_command
from gitmem.config import CONFIG_NAME, ROLES, Config, ConfigError, Files, load_config
from gitmem.confined import files
from gitmem.packaged import template_dir
from gitmem.scaffold import directory_named, make_directory
from gitmem.scaffold.gitignore import merge_gitignore
from gitmem.scaffold.precommit import HOOK_IDS, InitError, merge_precommit

__all__ = ["HOOK_IDS", "InitError", "InitReport", "init", "merge_gitignore", "merge_precommit", "template_dir",
           "template_files"]

PRECOMMIT = ".pre-commit-config.yaml"
GITIGNORE = ".gitignore"
MERGED = {PRECOMMIT: merge_precommit, GITIGNORE: merge_gitignore}
# The template's own README explains the template; `init` into an existing repo leaves its README alone. Its
# .gitattributes names the default memory files, for a repository made from the template on GitHub (a clone of
# it then says GM925 until `gitmem init` registers the driver); `init` writes the lines for the files that
# gitmem.yaml maps (`merge_driver.register`), so a project's own LOG.md is never given the memory merge.
NOT_COPIED = {"README.md", ".gitattributes"}
# The template's memory files, by role: they go wherever gitmem.yaml maps each role, once per workspace.
MEMORY_TEMPLATES = {getattr(Files(), role): role for role in ROLES}


@dataclass
class InitReport:
    root: str = ""
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    left_alone: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)      # --agent: what the configs call that is not installed
    initialised_git: bool = False
    hooks: list[str] = field(default_factory=list)          # --plain-hooks: the hooks installed (or already ours)
    steps: list[str] = field(default_factory=list)          # --agent: what the human still has to do (trust Codex)
    hooks_in_place: list[str] = field(default_factory=list)  # pre-commit/pre-push already running gitmem
    hooks_path: str | None = None     # core.hooksPath when set: `pre-commit install` refuses to install then
    merge_driver: list[str] = field(default_factory=list)   # the memory merge driver: what was registered


def template_files() -> list[str]:
    """Every file of the template, dotfiles and nested folders included (e.g. .github/workflows/*.yml)."""
    base = template_dir()
    return sorted(p.relative_to(base).as_posix() for p in base.rglob("*")
                  if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc")


def _prepare_repo(target: Path, report: InitReport, again: Sequence[str]) -> None:
    """Make `target` the top of a git work tree, like `git init DIR` would, without hijacking a parent repo.
    `again`: the options this init was given, for the command it suggests instead."""
    from gitmem import gitio

    if target.exists() and not target.is_dir():
        raise InitError(f"{target} exists and is not a directory; give a directory to create the agent in")
    fresh = not target.exists() or not any(target.iterdir())
    make_directory(target, InitError)
    try:
        repo = gitio.open_repo(target)
    except gitio.RepoError:
        repo = None
    work_tree = gitio.work_tree(repo) if repo is not None else None
    if repo is not None and work_tree is None:
        raise InitError(f"{target} is a bare git repository; clone it and run `gitmem init` in the clone")
    found = work_tree.resolve() if work_tree is not None else None
    if found == target.resolve():
        return
    if found is not None and not fresh:
        # Memory and gitmem.yaml live at the repository root, where `gitmem check` looks for them; scaffolding
        # a subfolder of someone's repository would produce files nothing reads.
        # The command to paste: quoted, and with this init's options (`--agent claude` dropped wired nothing).
        command = shlex.join(["gitmem", "init", *again, str(found)])
        raise InitError(f"{target} is inside the git repository at {found}; gitmem keeps memory at the "
                        f"repository root: run `{command}` (or init an empty folder for a new agent)")
    gitio.init_repo(target)
    report.initialised_git = True


def _existing_config(target: Path, report: InitReport) -> Config | None:
    """The repository's own gitmem.yaml when it has one (its names win), else the template's defaults; None,
    with a problem reported, when it cannot be read: then no memory file is created under a guessed name."""
    if not (target / CONFIG_NAME).exists():
        return Config()
    try:
        return load_config(target)
    except ConfigError as err:     # it names the file and the line
        report.problems.append(f"{err}; no memory file was created: fix it, then run `gitmem init` again")
        return None


def memory_destinations(config: Config) -> dict[str, list[str]]:
    """Template memory file -> where it goes: the path each workspace's config names for its role."""
    places = [config] + [config.with_workspace(name) for name, _ in config.workspaces]
    found: dict[str, list[str]] = {}
    for template_name, role in MEMORY_TEMPLATES.items():
        paths = [place.path(role) for place in places]
        found[template_name] = list(dict.fromkeys(str(PurePosixPath(p)) for p in paths))
    return found


def _copy(source: Path, target: Path, rel: str, report: InitReport) -> None:
    destination = target / rel
    # lexists: a dangling symlink is still the user's file; writing through it would create its target.
    if os.path.lexists(destination):
        report.left_alone.append(rel)
        return
    try:       # never through a linked directory: a template file lands inside the tree or nowhere
        files.write_bytes(target, rel, source.read_bytes())
    except files.FileRefused as err:
        report.problems.append(str(err))
        report.left_alone.append(rel)
        return
    report.created.append(rel)


def init(target: Path, agents: Sequence[str] = (), *, plain_hooks: bool = False) -> InitReport:
    """Copy every missing template file into `target`: memory files under the names gitmem.yaml gives them
    (for every workspace); an existing pre-commit config gets the gitmem hooks, an existing .gitignore the
    missing patterns. With `plain_hooks`, the plain git hooks go into the repository's hooks directory.
    `agents` (claude, codex, cursor) also wires those agent CLIs to the memory: gitmem.scaffold.agent_clis."""
    report = InitReport()
    with directory_named(target, InitError):
        _prepare_repo(target, report, [*(["--plain-hooks"] if plain_hooks else []),
                                       *(option for agent in agents for option in ("--agent", agent))])
    report.root = str(target.resolve())
    base = template_dir()
    config = _existing_config(target, report)
    destinations = memory_destinations(config) if config is not None else {}
    for rel in template_files():
        if rel in NOT_COPIED or (config is None and rel in MEMORY_TEMPLATES):
            continue
        if rel in destinations:
            for mapped in destinations[rel]:
                _copy(base / rel, target, mapped, report)
            continue
        destination = target / rel
        if rel in MERGED and os.path.lexists(destination):     # a link or a directory there is refused by name
            try:
                changed = MERGED[rel](destination, base / rel)
            except (InitError, files.FileRefused) as err:
                report.problems.append(str(err))
                report.left_alone.append(rel)
                continue
            (report.updated if changed else report.left_alone).append(rel)
            continue
        _copy(base / rel, target, rel, report)
    if config is not None:
        invalid = _kept_memory_invalid(target, config, report.left_alone)
        report.warnings += invalid + _kept_not_memory(target, config, report.left_alone, invalid)
        _merge_driver(target, config, report)
    if plain_hooks:
        _plain_hooks(target, report)
    else:
        from gitmem import gitio
        from gitmem.scaffold.git_hooks import hooks_in_place

        try:
            repo = gitio.open_repo(target)
            report.hooks_in_place = hooks_in_place(gitio.hooks_dir(repo))
            report.hooks_path = gitio.config_value(repo, "core.hooksPath")
        except gitio.GitCommandError:      # no git to ask where hooks live: and none can run without it
            pass
    if agents:
        from gitmem.scaffold.agent_clis import missing_parts, setup

        setup(target, agents, lambda rel, what: _record(report, rel, what), report.steps.append)
        report.warnings += missing_parts(agents)
    return report


def _kept_memory_invalid(target: Path, config: Config, kept: list[str]) -> list[str]:
    """A warning for each memory file init found already there (a project's own LOG.md or NOW.md) that is not
    valid memory as it stands (`gitmem.checks.standing`): "left alone" and exit 0 read as done, and the first
    `gitmem log add` was refused."""
    from gitmem.checks.standing import standing

    def read(path: str) -> bytes | None:
        try:
            return files.read_bytes(target, path) if path in kept else None
        except files.FileRefused:      # a link or a directory: named as a problem when it was left alone
            return None

    found = [v for place in [config] + [config.with_workspace(name) for name, _ in config.workspaces]
             for v in standing(place, read)]
    by_path: dict[str, list[str]] = {}
    for v in sorted(set(found)):
        by_path.setdefault(v.path, []).append(f"{v.path}:{v.line}: {v.code} {v.message}")
    return [f"{path} was here before init and is not valid memory ({shown[0]}"
            + (f"; and {len(shown) - 1} more" if len(shown) > 1 else "") + "): gitmem's first write to it is "
            "refused; `gitmem status` lists each line with its fix, or, if it is a file of your own, move it "
            f"aside (or name another file for its role under `files:` in {CONFIG_NAME}) and run `gitmem init` again"
            for path, shown in by_path.items()]


# What gitmem writes into each role's file, and the command that writes it first: a project's own file of that
# name which holds none of them yet is not memory, however well it parses.
WRITTEN = {"log": ("entry", "entries", "log add"), "now": ("block", "blocks", "now add"),
           "decisions": ("decision", "decisions", "decision ask"), "lessons": ("lesson", "lessons", "lesson add")}


def _kept_not_memory(target: Path, config: Config, kept: list[str], warned: list[str]) -> list[str]:
    """A warning for each memory file init found already there that parses, but is a project's own file: a
    title other than the role's (`# Changelog`, not `# LOG`) and no entry of gitmem's in it. "left alone" read
    as done, and the first `gitmem log add` appended the agent's entries to the project's changelog."""
    from gitmem.memory import decisions, lessons, log, now
    from gitmem.memory.decoding import decode_file

    items: dict[str, Callable[[str], tuple[object, ...]]] = {
        "log": lambda text: log.parse(text).entries, "now": lambda text: now.parse(text, max_blocks=1).blocks,
        "decisions": lambda text: decisions.parse(text).all, "lessons": lambda text: lessons.parse(text).lessons}
    found: list[str] = []
    for place in [config] + [config.with_workspace(name) for name, _ in config.workspaces]:
        for role, (what, plural, command) in WRITTEN.items():
            path = place.path(role)
            if path not in kept or any(warning.startswith(f"{path} ") for warning in [*warned, *found]):
                continue
            try:
                data = files.read_bytes(target, path)
            except files.FileRefused:
                continue
            text = decode_file(data or b"")[0]
            title = text.lstrip("\ufeff").split("\n", 1)[0].strip()
            if title == f"# {role.upper()}" or items[role](text):
                continue
            found.append(f"{path} was here before init, with its own title ({title!r}) and no {what} of gitmem's "
                         f"in it: the first `gitmem {command}` writes the agent's {plural} into it; if it is a file "
                         f"of your own, move it aside (or name another file for its role under `files:` in "
                         f"{CONFIG_NAME}) and run `gitmem init` again")
    return found


def _merge_driver(target: Path, config: Config, report: InitReport) -> None:
    """Register the memory merge driver (gitmem.scaffold.merge_driver) for every mergeable memory file."""
    from gitmem import gitio
    from gitmem.scaffold.merge_driver import register

    places = [config] + [config.with_workspace(name) for name, _ in config.workspaces]
    paths = list(dict.fromkeys(str(PurePosixPath(place.path(role))) for place in places
                               for role in ("log", "now", "decisions", "lessons")))
    try:
        report.merge_driver, kept = register(target, paths)
    except (gitio.GitCommandError, files.FileRefused) as err:
        report.warnings.append(f"the memory merge driver was not registered: {err}")
        return
    report.warnings += kept


def _record(report: InitReport, rel: str, what: str) -> None:
    """What an agent's step did to `rel`. A file this run created, updated or left alone already is named once, as
    that: a second `--agent` finds the AGENTS.md the first one wrote, and the codex step adds its command to the
    gitmem.yaml the template step created ("left alone AGENTS.md (exists)" of a file made a moment before)."""
    lists = {"created": report.created, "updated": report.updated, "left alone": report.left_alone}
    if what not in lists:        # a problem: the file was not touched, and may not exist ("left alone (exists)")
        report.problems.append(f"{rel}: {what}")
        return
    if rel in report.created or (rel in report.updated and what != "created") or \
            (rel in report.left_alone and what == "left alone"):
        return
    if rel in report.left_alone and what == "updated":
        report.left_alone.remove(rel)
    lists.get(what, report.left_alone).append(rel)


def _plain_hooks(target: Path, report: InitReport) -> None:
    from gitmem import gitio
    from gitmem.scaffold.git_hooks import install_hooks

    repo = gitio.open_repo(target)
    where = gitio.hooks_dir(repo)
    installed, same, foreign = install_hooks(where)
    report.hooks = installed + same
    shown = os.path.relpath(where, target)
    for name in foreign:
        report.problems.append(f"{Path(shown) / name} exists and is not gitmem's hook: left as it is; add "
                               f"`gitmem {'check' if name == 'pre-commit' else 'verify --pre-push'}` to it, "
                               "or move it away and run `gitmem init --plain-hooks` again")
    if report.hooks and shutil.which("gitmem") is None:
        report.warnings.append(_gitmem_not_on_path())


def _gitmem_not_on_path() -> str:
    """The plain hooks run `gitmem` from PATH: a gitmem installed in a venv nobody activated (the Quick start's)
    would refuse every commit, so init says where this one is."""
    beside = Path(sys.executable).parent          # this gitmem's venv, not activated
    where = (f"export PATH={shlex.quote(str(beside))}:\"$PATH\" (in your shell profile)"
             if (beside / "gitmem").is_file() else f"install it: {install_command()}")
    return f"gitmem is not on PATH, so the git hooks refuse every commit and push until it is: {where}"
