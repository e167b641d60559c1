"""Reading a source's files: each a regular UTF-8 file inside the source's own directory, of a bounded size.

A file that is a link (out of its directory or not), a FIFO, too large or not UTF-8 is a `path:line: GM950`
problem; the whole import stops before anything is written, so nothing is half-imported and the source itself is
never touched. Reads go through gitmem's confined opener (gitmem.confined.files), which follows no link.
"""
from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from datetime import UTC, date, datetime, tzinfo
from pathlib import Path

from gitmem import codes
from gitmem.checks.violation import Violation
from gitmem.confined import files
from gitmem.errors import ExitCode, GitmemError
from gitmem.interop.facts import exported_record, without_export_prose

# A memory file another CLI keeps is loaded into a prompt whole: Claude Code reads 200 lines of MEMORY.md, Gemini
# CLI its GEMINI.md. Anything this large is not such a file, and reading it would flood LESSONS.
MAX_BYTES = 512 * 1024
# How deep a source's folders are walked (Gemini CLI's inbox: `.inbox/<kind>/…/*.patch`, a folder or two): a deeper
# tree is no CLI's memory, and walking it without end would exhaust the stack.
MAX_FOLDERS = 16


class SourceProblem(GitmemError):
    """A source cannot be imported as it stands; `violations` name each file and line. Nothing was written."""

    exit_code = ExitCode.VIOLATIONS


class SourceMissing(GitmemError):
    """The source is not where its CLI keeps it."""

    exit_code = ExitCode.USAGE


@dataclass(frozen=True)
class NotRead:
    """A file a source's own file names (an `@path` import) that the import does not read, and why: said beside
    the plan, never a problem that stops the import (the CLI may well read it: the user's own file at home). Or,
    `kind` "frontmatter", a frontmatter that does not parse, left out of a file whose CLI hides it from its model
    (gitmem.interop.notes), `target` its lines (`1-3`)."""

    file: str          # the naming file, as an origin names it (`./CLAUDE.md`)
    line: int
    target: str        # the name as written there
    reason: str
    kind: str = "import"


@dataclass(frozen=True)
class SourceFile:
    rel: str            # relative to the source's directory: the origin names it so
    text: str
    written: date | None    # the file's modification day (the memory's zone): when the CLI last wrote it, or None


class Reader:
    """Reads the files of one source directory and collects the problems of those it cannot read."""

    def __init__(self, root: Path, zone: tzinfo = UTC, own: frozenset[str] = frozenset()) -> None:
        self.root = root
        self.zone = zone          # the memory's time zone: a file's day is a day there, as every day in memory
        self.own = own            # gitmem's own memory files (absolute paths): never a source's, never read
        self.problems: list[Violation] = []
        self.exported_by: dict[str, str] = {}   # a file an export wrote: the record its marker names
        self.files_read = 0                     # the source's files read (an empty one too)
        self.not_read: list[NotRead] = []       # files the source's files name that are not read, and why

    def shown(self, rel: str) -> str:
        """The file as a diagnostic names it: a name that is not UTF-8 shows its bytes escaped, never raw, and a
        secret in the path is masked as all output is."""
        from gitmem.secrets import scrub

        return scrub(str(self.root / rel).encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace"))

    def _refuse(self, rel: str, line: int, what: str, fix: str) -> None:
        self.problems.append(Violation.of(codes.IMPORT_SOURCE_UNREADABLE, self.shown(rel), line, what=what, fix=fix))

    def markdown_in(self, rel_dir: str = ".") -> list[str]:
        """The `*.md` names in the directory `rel_dir`, sorted; a link or another non-file among them is a
        problem (never followed, never skipped in silence)."""
        return self.named_in(rel_dir, ".md")

    def link_on_the_way(self, rel: str) -> bool:
        """Whether `rel` or a folder on the way to it is a symbolic link (anywhere on the way, never only at its
        end): the first one is refused, a problem."""
        steps = [part for part in rel.split("/") if part not in ("", ".")]
        for at in range(1, len(steps) + 1):
            if self.root.joinpath(*steps[:at]).is_symlink():
                self.refuse_link("/".join(steps[:at]))
                return True
        return False

    def named_in(self, rel_dir: str, suffix: str, *, below: bool = False, depth: int = 0) -> list[str]:
        """The names ending in `suffix` in the directory `rel_dir` (and, `below`, in its folders, walked as
        Gemini CLI walks its memory inbox, MAX_FOLDERS deep at most), sorted; a link or another non-file among
        them, or a folder that cannot be listed, is a problem."""
        where = self.root / rel_dir
        if self.link_on_the_way(rel_dir):
            return []
        if depth > MAX_FOLDERS:
            self._refuse(rel_dir, 1, f"is a folder nested more than {MAX_FOLDERS} deep; memory is not kept there",
                         "move what is memory nearer the top, or import a part of it with --from")
            return []
        try:
            entries = sorted(os.scandir(where), key=lambda entry: entry.name)
        except FileNotFoundError:
            return []
        except NotADirectoryError:
            self._refuse(rel_dir, 1, "is not a directory", "name the directory the CLI keeps its memory in")
            return []
        except OSError as err:          # not readable, a name too long: named, as a file that cannot be read is
            self._refuse(rel_dir, 1, f"is a folder that cannot be listed ({err.strerror or err})",
                         "make it readable, or move it away")
            return []
        found = []
        for entry in entries:
            rel = entry.name if rel_dir in ("", ".") else f"{rel_dir}/{entry.name}"
            if below and entry.is_symlink():           # a link among the walked folders, whatever its name
                self.refuse_link(rel)
                continue
            if below and entry.is_dir(follow_symlinks=False):
                found += self.named_in(rel, suffix, below=True, depth=depth + 1)
                continue
            if not entry.name.endswith(suffix):
                continue
            if not _plain_name(entry.name):
                self._refuse(rel, 1, "has a name that is not printable UTF-8 text; an origin could not name it",
                             "rename the file")
            elif entry.is_symlink():
                self.refuse_link(rel)
            elif not entry.is_file(follow_symlinks=False):
                self._refuse(rel, 1, "is not a regular file", "put the file itself there, or move it away")
            else:
                found.append(rel)
        return found

    def refuse_link(self, rel: str) -> None:
        """Name `rel`, a symbolic link, as a problem: import reads no link."""
        try:
            target = os.readlink(self.root / rel)
            inside = (self.root / rel).parent.joinpath(target).resolve().is_relative_to(self.root.resolve())
            what = f"is a symbolic link {'inside' if inside else 'out of'} its directory"
        except (OSError, RuntimeError):    # a loop of links, a name too long: still a link, which is refused
            what = "is a symbolic link that cannot be followed (a loop, or a name too long)"
        self._refuse(rel, 1, f"{what}; import reads no link",
                     "copy the file it points to into the directory in its place, or move the link away")

    def read(self, rel: str) -> SourceFile | None:
        """The file; None when it is missing or cannot be read (then a problem names it), or is one of gitmem's own
        memory files (Cline's `memory-bank` made gitmem's `memory_dir`, CLAUDE.md made RULES)."""
        if os.path.abspath(self.root / rel) in self.own:
            return None
        if os.path.islink(self.root / rel):
            self.refuse_link(rel)
            return None
        try:
            handle = files.open_read(self.root, rel)
        except files.FileRefused as err:
            self._refuse(rel, 1, err.what, "put a regular file there, or move it away")
            return None
        if handle is None:
            return None
        with handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                self._refuse(rel, 1, "is not a regular file", "put a regular file there, or move it away")
                return None
            if info.st_size > MAX_BYTES:
                self._refuse(rel, 1, f"is {info.st_size} bytes, more than {MAX_BYTES}: too large for a memory file",
                             "split it, or import the part that is memory from a smaller file")
                return None
            data = handle.read(MAX_BYTES + 1)
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as err:
            line = data[:err.start].count(b"\n") + 1
            self._refuse(rel, line, f"is not UTF-8 (byte {err.start}: {err.reason})", "save the file as UTF-8")
            return None
        text = text.removeprefix("\ufeff").replace("\r\n", "\n")
        from gitmem.memory.decoding import control_characters

        for offset, what in control_characters(text.encode("utf-8")):
            line = text.encode("utf-8")[:offset].count(b"\n") + 1
            self._refuse(rel, line, f"holds {what} at byte {offset}; memory is plain text",
                         "remove it from the file, then import again")
            return None
        if (record := exported_record(text)) is not None:
            self.exported_by[rel] = record
            text = without_export_prose(text)
        self.files_read += 1
        return SourceFile(rel, text, _day_of(info.st_mtime, self.zone))


def _day_of(mtime: float, zone: tzinfo) -> date | None:
    """The day of a modification time in `zone`; None for a time no calendar date holds (past year 9999 or before
    year 1, which some file systems keep): the origin then says `written unknown`."""
    try:
        return datetime.fromtimestamp(mtime, zone).date()
    except (ValueError, OverflowError, OSError):
        return None


def _plain_name(name: str) -> bool:
    """A file name an origin line can hold: UTF-8 (no lone surrogates from undecodable bytes), no control
    characters (a newline would break the line)."""
    return name.isprintable() and not any("\udc80" <= char <= "\udcff" for char in name)


def source_missing(where: Path, what: str) -> SourceMissing:
    """The refusal of a source that is not where its CLI keeps it, naming that place and the override."""
    return SourceMissing(f"found no {what} to import", [Violation.of(
        codes.IMPORT_SOURCE_MISSING, str(where), 1, what=f"no {what} here",
        fix="name where it is with --from PATH")])


def shown_dir(where: Path, project: Path, home: Path) -> str:
    """How an origin names a source directory: inside the project relative to it, under the home directory as
    `~/…`, else in full. Re-importing from the same place names it the same, so keys match."""
    for base, label in ((project, "."), (home, "~")):
        try:
            rest = where.resolve().relative_to(base.resolve())
        except ValueError:
            continue
        return label if not rest.parts else f"{label}/{rest.as_posix()}"
    return where.as_posix()
