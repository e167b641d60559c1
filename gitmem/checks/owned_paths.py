"""GM908: the paths gitmem owns keep their kind. One rule for all of them, whoever makes the change.

gitmem reads or writes these paths itself, or installs them: the memory files, ROADMAP, gitmem.yaml and the
`cycle.always_load` files (read as trusted input), the prompts and the secrets allowlist, the hook and workflow
files the template installs, and the `history/` folder beside each workspace's LOG.md, where the runner seals
LOG's volumes. Each must be its kind, a regular file or a plain folder, and so must every folder on the way to it:
never a symbolic link (gitmem follows none, so a link disables what it replaces: `history` as a link stops every
seal), never a submodule, never a file where a folder belongs nor the reverse. No git here: the snapshots
come from `gitmem.gitio`.
"""
from __future__ import annotations

import posixpath
from collections.abc import Iterator

from gitmem import codes
from gitmem.checks.inputs import CheckInput
from gitmem.checks.violation import Violation
from gitmem.config import CONFIG_NAME, REQUIRED_ROLES, Config
from gitmem.confined.files import BLOB_MODES, TREE, describe_mode
from gitmem.gitio import Snapshot
from gitmem.memory import volumes
from gitmem.records import record
from gitmem.secrets import ALLOWLIST_FILE

FILE, FOLDER = "file", "folder"

# The files `gitmem init` copies from the template that gitmem itself reads or that install it (the hooks it
# runs, the workflows that run it, the merge driver's attributes). The template's README is the project's own.
# tests/checks/test_owned_paths.py holds this list to the template.
INSTALLED = (ALLOWLIST_FILE, ".gitattributes", ".gitignore", ".pre-commit-config.yaml",
             ".github/workflows/gitmem.yml", ".github/workflows/gitmem-check.yml")
PROMPTS = ("cycle.md", "close.md")


@record(frozen=True)
class Owned:
    """A path gitmem owns, the kind it must be, and the GM908 variant that reports it (the rules generation
    that made gitmem own it: the trusted files since rules 2, the others since rules 6)."""
    path: str
    kind: str
    variant: str


def trusted_paths(config: Config) -> list[str]:
    """The files gitmem reads as trusted input: the memory files, ROADMAP, gitmem.yaml, `cycle.always_load`."""
    extra = [rel for rel in config.cycle.always_load if rel and not rel.startswith("/") and ".." not in rel.split("/")]
    return list(dict.fromkeys([*config.memory_paths().values(), CONFIG_NAME, *extra]))


def volume_folders(config: Config) -> list[str]:
    """The `history/` folder beside every workspace's LOG.md: the runner writes LOG's volumes there."""
    return sorted({volumes.volume_folder(paths["log"]) for paths in config.workspace_paths().values()})


def owned_paths(config: Config) -> list[Owned]:
    """Every path gitmem owns in a repository with this config, with its kind."""
    found = [Owned(path, FILE, "") for path in trusted_paths(config)]
    # The cycle's prompt in each workspace's memory_dir is read before the root's (gitmem.cycle.budget).
    dirs = [config.memory_dir, *(w.memory_dir for _, w in config.workspaces)]
    prompts = [f"prompts/{name}" for name in PROMPTS] + [posixpath.join(d.strip("/"), "prompts", PROMPTS[0])
                                                         for d in dirs if d.strip("/") not in ("", ".")]
    found += [Owned(path, FILE, "owned_file") for path in [*INSTALLED, *prompts]]
    found += [Owned(path, FOLDER, "folder") for path in volume_folders(config)]
    unique: dict[str, Owned] = {}
    for item in found:          # a trusted file that is also a prompt (an `always_load` one) keeps its variant
        unique.setdefault(item.path, item)
    return list(unique.values())


def _right(kind: str, mode: int) -> bool:
    return mode == TREE if kind == FOLDER else mode in BLOB_MODES


def _what(mode: int) -> str:
    return "is a file" if mode in BLOB_MODES else describe_mode(mode)


def _offending(item: Owned, snapshot: Snapshot) -> tuple[str, int, bool] | None:
    """(path, mode, whether it is the owned path itself) of the first entry on the way to `item`, or `item`
    itself, that is not its kind; None when all are (a missing one is fine: gitmem makes it when it writes)."""
    parts = item.path.split("/")
    for depth in range(1, len(parts) + 1):
        path = "/".join(parts[:depth])
        mode = snapshot.mode(path)
        if mode is None:
            continue
        last = depth == len(parts)
        if not _right(item.kind if last else FOLDER, mode):
            return path, mode, last
    return None


def _made_wrong(inp: CheckInput, path: str, mode: int) -> bool:
    """Whether the change made `path` the wrong kind it now is: the old side did not hold it, held it as its
    right kind, or held it as another wrong kind (a link made a submodule: a new choice, judged as one)."""
    if inp.old is None:
        return True
    before = inp.old.mode(path)
    # One that was this wrong kind already stays as the human chose it: a submodule bumped or a link pointed
    # elsewhere is still that submodule or link, and gitmem enters neither, so the new target changes nothing
    # it reads or writes. Judging it again would refuse every ordinary commit to it and name its removal as the
    # fix. A file edited where a folder belongs is a file still, so the comparison is by kind, not by mode.
    return before is None or _what(before) != _what(mode)


def wrong_kind(inp: CheckInput, *, kinds: tuple[str, ...] = (FILE, FOLDER)) -> list[Violation]:
    """GM908 for each path gitmem owns (of `kinds`) that the change makes a link, a submodule or the wrong kind,
    or that it reaches through one. A required memory file cannot be read at all, so it is always reported."""
    required = {inp.config.path(role) for role in REQUIRED_ROLES}
    found: dict[str, Violation] = {}
    for item in owned_paths(inp.config):
        if item.kind not in kinds:
            continue
        offending = _offending(item, inp.new)
        if offending is None or offending[0] in found:
            continue
        path, mode, itself = offending
        if not (_made_wrong(inp, path, mode) or itself and item.path in required):
            continue
        found[path] = _violation(item, path, mode, itself)
    return list(found.values())


def _violation(item: Owned, path: str, mode: int, itself: bool) -> Violation:
    what = _what(mode)
    if not itself:
        return Violation.of(codes.NOT_A_REGULAR_FILE, path, 1, "on_the_way", path=path, what=what, owned=item.path)
    if item.kind == FOLDER:
        return Violation.of(codes.NOT_A_REGULAR_FILE, path, 1, "folder", path=path, what=what)
    return Violation.of(codes.NOT_A_REGULAR_FILE, path, 1, item.variant, path=path, what=what)


def refused_files(inp: CheckInput) -> Iterator[str]:
    """The trusted files the new side holds as something else than a regular file: read as no file at all."""
    return (path for path in trusted_paths(inp.config) if inp.new.mode(path) not in (None, *BLOB_MODES))
