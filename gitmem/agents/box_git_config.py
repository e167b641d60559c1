"""The git config files the box shows the agent: copies without the credentials a repository's config can hold.

The box binds the git directory read-only (gitmem.agents.sandbox_mounts), which keeps the agent from changing
it, not from reading it; and a repository's config is where credentials are kept beside the settings git needs:
an `http.<url>.extraheader` (the `AUTHORIZATION: basic …` actions/checkout leaves), a remote URL with
`user:token@` in it, a `credential` section (a stored username, a helper script that echoes a password), a key
whose name says it holds one (`sendemail.smtpPass`, `hub.oauthtoken`; gitmem.secrets.is_secret_name). And so is
every other config file git reads for the repository (gitmem.gitio.config_files): a linked tree's, each
submodule's (under `modules/`, or its own `.git` folder in the work tree), the system's `/etc/gitconfig`, and the
files any of them includes (`include.path`, `includeIf.*.path`: a `~/.gitconfig-work` with a helper, a file
beside .git/config); and so is the config of every other git directory in the work tree, with what it
includes (gitmem.gitio.config_files_in_tree: a clone kept in the project, `vendor/lib/.git`, that no config
names; a bare repository; where a `.git` file leads), which git run there reads; a config the agent can write
has its includes followed only into the work tree (gitmem.gitio.state `_included`). So each of them the box shows
at all (`shown`: under a folder it binds) that holds one is read as git reads it (`git config --list`, includes
not followed: the copy names the same files, themselves shown as copies) and written again without them: no
such key, and no user or password in any URL. The copy is bound read-only over the original for the box's
lifetime; the human's file is never changed. Git inside the box still reads everything else (status, log,
diff). A file git cannot read is shown empty: what git fails to parse cannot be judged; so is one over
gitio.MAX_CONFIG_BYTES, unread, with a comment saying so (OVERSIZE), and only a regular file is read at all. A
file is read once however many names it has (links, hard links: by device and inode), its copy bound over each.

Where a copy stands over a file the index tracks as the tree holds it (a committed settings file that
.git/config includes), the box also shows a copy of the index that takes that file as unchanged
(gitmem.gitio.index_view), so git there does not report it modified; and so for a nested repository (a clone
kept in the project whose config includes a settings file it tracks): that clone's index is shown as such a
copy, found from the stripped file's folder up, as git finds the repository it runs in. A copy is read-only, so
git in the box stages nothing in that clone (git outside the box, and a clone without such a file, are as
ever): a status that tells the truth, at that price. That file's committed text is in the objects the agent
reads (`git show HEAD:path`): a credential committed is in the history, and no view of the tree hides it.

The copies hold nothing secret (the index's names paths and blob ids, as the git directory's own does). They
live in one private temporary folder of this process, each named by its content, and go with the process
(`atexit`).
"""
from __future__ import annotations

import atexit
import hashlib
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from functools import cache
from pathlib import Path

from gitmem import gitio
from gitmem.secrets import is_secret_name

# A section whose every key is about credentials, and a key that carries one whatever its name.
CREDENTIAL_SECTIONS = frozenset({"credential"})
CREDENTIAL_KEYS = frozenset({"extraheader"})
# `scheme://user:password@` or `scheme://token@`: the user part goes with the password (tokens stand as users).
# What the box shows for a config file over gitio.MAX_CONFIG_BYTES: a comment, which git reads as no entry.
OVERSIZE = ("# gitmem: this git config file ({size} bytes) is over {bound} bytes, the most the box reads to "
            "strip credentials from one: shown empty, unread\n")
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^\s/?#@]*@")


def shown_copies(repo: gitio.Repo, shown: Callable[[str], bool]) -> tuple[tuple[str, str], ...]:
    """(copy, original) for each config file git reads for `repo` (gitmem.gitio.config_files), or in a git
    directory of its work tree (gitmem.gitio.config_files_in_tree), that the box shows (`shown`, given the file's
    real path) and that holds a credential: the copy to bind read-only over the file's real path, where a link to
    it leads too. A file without one is shown as it is (no copy, no mount); one the box does not show is left
    alone (the host's `~/.gitconfig`: the box has a HOME of its own). And the index's copy when a copy stands
    over a tracked file (`_index_view`), the repository's or a nested one's (`_nested_repos`)."""
    found: dict[str, str | None] = {}               # each path read once, however many links lead to it
    by_file: dict[tuple[int, int], str | None] = {}  # and each file, however many hard links name it
    for path in dict.fromkeys([*gitio.config_files(repo), *gitio.config_files_in_tree(repo)]):
        real = os.path.realpath(path)
        if real in found or not shown(real):
            continue
        seen = gitio.regular_stat(Path(real))       # never a FIFO, a device, or a file under /proc
        if seen is None:
            continue
        file = (seen.st_dev, seen.st_ino)
        if file not in by_file:
            by_file[file] = _copy(Path(real), seen.st_size)
        found[real] = by_file[file]                 # the one copy, bound over every name of the file
    copies = [(copy, original) for original, copy in found.items() if copy is not None]
    stripped = [original for _copy, original in copies]
    views = [view for each in [repo, *_nested_repos(repo, stripped)] for view in _index_view(each, stripped)]
    return (*copies, *views)


def _nested_repos(repo: gitio.Repo, stripped: list[str]) -> list[gitio.Repo]:
    """The repositories nested in `repo`'s work tree (a clone kept in the project) whose work tree holds a
    stripped file outside every git directory: the one git finds from the file's folder up, as git run there
    does, short of the top. No walk: only the stripped files' own folders are looked at."""
    tree = gitio.work_tree(repo)
    if tree is None:
        return []
    top = Path(os.path.realpath(tree))
    found: dict[Path, None] = {}
    for path in map(Path, stripped):
        if not path.is_relative_to(top) or ".git" in path.relative_to(top).parts:
            continue
        folder = next((up for up in path.parents if up == top or os.path.lexists(up / ".git")), top)
        if folder != top:
            found.setdefault(folder, None)
    opened: list[gitio.Repo] = []
    for folder in found:
        try:
            opened.append(gitio.open_repo(folder))
        except gitio.RepoError:
            continue            # git refuses it (another user's): git in the box refuses it as well
    return opened


def _copy(path: Path, size: int) -> str | None:
    """The copy to show for the config file `path` of `size` bytes, or None to show it as it is. One over
    MAX_CONFIG_BYTES is shown empty but for a comment that says so, unread: git takes minutes and gigabytes to
    list a config of tens of megabytes, which the agent may have written in the tree for the next box."""
    if size == 0:
        return None
    if size > gitio.MAX_CONFIG_BYTES:
        return str(_written(OVERSIZE.format(size=size, bound=gitio.MAX_CONFIG_BYTES).encode("utf-8")))
    text = sanitised(path)
    return None if text is None else str(_written(text.encode("utf-8", "surrogateescape")))


def _index_view(repo: gitio.Repo, stripped: list[str]) -> list[tuple[str, str]]:
    """(copy, original) of the index, when a stripped file is one it tracks and the work tree holds as it has
    it (a committed file that .git/config includes): a copy that takes each such file as unchanged, so git inside
    sees it as git outside does, not as modified. Nothing where git cannot write one (a split index): git inside
    then reports the file modified. Its committed text, credential and all, is in the objects the agent reads
    through git (`git show HEAD:path`), which no view of the work tree hides."""
    rels = gitio.unchanged_tracked(repo, stripped)
    data = gitio.index_assuming_unchanged(repo, rels) if rels else None
    return [] if data is None else [(str(_written(data)), os.path.realpath(gitio.git_dir(repo) / "index"))]


def sanitised(path: Path) -> str | None:
    """The text of a config file holding `path`'s entries without credentials, or None when it holds none."""
    entries = gitio.config_entries(path)
    if entries is None:
        return ""
    kept: list[tuple[str, str | None]] = []
    for key, value in entries:
        section, _, rest = key.partition(".")
        name = rest.rpartition(".")[2]
        if section in CREDENTIAL_SECTIONS or name in CREDENTIAL_KEYS or is_secret_name(name):
            continue
        kept.append((_without_userinfo(key), None if value is None else _without_userinfo(value)))
    return None if kept == entries else _text(kept)


def _without_userinfo(text: str) -> str:
    return _USERINFO.sub(r"\1", text)


def _text(entries: list[tuple[str, str | None]]) -> str:
    """Config file text for `entries`, in order: a section header whenever the section changes."""
    lines: list[str] = []
    current: tuple[str, str | None] | None = None
    for key, value in entries:
        section, _, rest = key.partition(".")
        subsection, dot, name = rest.rpartition(".")
        here = (section, subsection if dot else None)
        if here != current:
            current = here
            lines.append(f"[{section}]" if here[1] is None else f'[{section} "{_escaped(here[1])}"]')
        lines.append(f"\t{name}" if value is None else f'\t{name} = "{_escaped(value)}"')
    return "".join(f"{line}\n" for line in lines)


def _escaped(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")


def _written(data: bytes) -> Path:
    place = _folder() / hashlib.sha256(data).hexdigest()[:32]
    if not place.is_file():
        fd, name = tempfile.mkstemp(dir=place.parent)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(name, 0o644)        # root's agent is another uid inside: it must read the copy
        os.replace(name, place)
    return place


@cache
def _folder() -> Path:
    made = Path(tempfile.mkdtemp(prefix="gitmem-box-config-"))
    os.chmod(made, 0o755)
    atexit.register(shutil.rmtree, made, ignore_errors=True)
    return made
