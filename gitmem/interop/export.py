"""`gitmem export --to FORMAT`: the memory in force, written where another CLI reads memory.

What is exported: the proven rules, the standing (open) lessons, the resolved decisions and the top NOW block,
each naming its entry (`[gitmem: L-0003]`) so that importing the export back adds nothing
(gitmem.interop.plan), and an imported lesson or an accepted proposal keeps its origin. Every file written opens
with a pointer back to the repository, the record: the files are a copy to read, and are rewritten whole by the
next export. A file there that does not carry that pointer is someone's own and is never overwritten (GM953);
nothing is written through a link. The pointer names the format too: one export format's files are not replaced by
another's in a shared folder (GM953, unless `force`: only then, and only files no one changed since).
"""
from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from gitmem import codes, secrets
from gitmem.checks.violation import Violation
from gitmem.confined import files
from gitmem.errors import ExitCode, GitmemError
from gitmem.interop import agent_memory_repo, gemini, importing
from gitmem.interop.exported_by import comparable, record_of, records_of
from gitmem.interop.facts import MARKER, POINTER_PROSE, SUMMARY_PROSE, normalized
from gitmem.interop.gemini_places import context_file_names
from gitmem.interop.plan import ORIGIN_FIELD, PROPOSAL_RE
from gitmem.memory import decisions, lessons, now, rules
from gitmem.workspace import Workspace

EXPORT_FORMATS = ("agent-memory-repo", "claude", "codex", "gemini")
MARKER_WITHIN = 4096      # the bytes of a file read for the marker: an export writes it before any entry's text
DESCRIPTION_MAX = 150     # a topic file's one-line description (Claude Code's index shows it), in characters
# The marker's seal, ` · sha256 <16 hex>`: a digest of the file as the export wrote it (with the marker unsealed).
_SEAL = " · sha256 "
_SEALED_RE = re.compile(f"({re.escape(MARKER)} .*){re.escape(_SEAL)}([0-9a-f]{{16}}) -->")
_FORMAT = " · format "
OURS, CHANGED, FOREIGN = "ours", "changed", "foreign"
_SLUG_RE = re.compile(r"[^A-Za-z0-9]+")
# An import decision's answer in the form its recommendation asks for: `P1 P3` (commas allowed), `all` or `none`.
_ANSWER_RE = re.compile(r"(?i:all|none|P[0-9]+(?:[\s,]+P[0-9]+)*)\.?")


class ExportRefused(GitmemError):
    """A file in the target is not gitmem's export, or cannot be written safely; nothing was written."""

    exit_code = ExitCode.VIOLATIONS


class NoCliMemoryDir(GitmemError):
    """`--cli-location` for a format no CLI reads from a place of its own (an Agent Memory Repo)."""


@dataclass(frozen=True)
class Item:
    """One entry in force: `ref` names it in the repository (R-03, L-0003, D-0004, NOW)."""

    ref: str
    kind: str            # rule | lesson | decision | now
    title: str
    text: str            # one line
    more: tuple[str, ...] = ()       # further lines (an accepted import's proposals, with their origins)
    day: date | None = None

    def line(self) -> str:
        return f"{self.text} [gitmem: {self.ref}]"


@dataclass(frozen=True)
class Exported:
    """One `gitmem export`: the format, the directory written, the files written there and the entries in them."""

    fmt: str
    directory: Path
    files: list[str]
    entries: list[Item]


def cli_memory_dir(ws: Workspace, fmt: str, environ: Mapping[str, str], home: Path) -> Path:
    """Where the CLI of `fmt` reads its memory for this project: the first place its import reads
    (gitmem.interop.importing.SOURCE_READERS); NoCliMemoryDir when it has none."""
    roots: list[Path] = importing.SOURCE_READERS[fmt].default_roots(ws, environ, home)
    if not roots:
        raise NoCliMemoryDir(f"{fmt} has no place a CLI reads it from: give --out DIR")
    return roots[0]


def export_memory(ws: Workspace, fmt: str, target: Path, *, force: bool = False) -> Exported:
    """The memory in force written into `target` as `fmt`'s files (ExportRefused, nothing written, when a file
    there is not an earlier export's, or, unless `force`, another format's export); today's date is the workspace
    clock's."""
    found = items(ws)
    files = render_export(fmt, found, record_of(ws), ws.clock()().date())
    if fmt == "gemini":
        # The file Gemini CLI loads from there: the first `context.fileName` its settings in that folder name
        # (`~/.gemini`), GEMINI.md when they name none, as `import gemini` reads it back.
        files = {context_file_names(target)[0]: text for text in files.values()}
    written = write_export(target, files, ws.root, records=records_of(ws), fmt=fmt, force=force)
    return Exported(fmt, target, written, found)


def items(ws: Workspace) -> list[Item]:
    found: list[Item] = []
    every_lesson = lessons.parse(ws.read("lessons")).lessons
    # An imported fact keeps its origin whatever it became: a rule promoted from an imported lesson carries it.
    origins = {lesson.id: f" (origin: {normalized(origin)})" for lesson in every_lesson
               if (origin := lesson.get(ORIGIN_FIELD))}
    for rule in rules.parse(ws.read("rules")).proven:
        found.append(Item(rule.id, "rule", rule.text, f"{rule.id} (proven rule): {normalized(rule.text)}"
                          + origins.get(rule.lesson or "", "")))
    for lesson in every_lesson:
        if not lesson.is_open:
            continue
        text = f"{lesson.id} (lesson, open): {lesson.title}. Change: {normalized(lesson.get('Change') or '')}"
        text += origins.get(lesson.id, "")
        happened = lesson.happened
        found.append(Item(lesson.id, "lesson", lesson.title, text, day=happened.day if happened else None))
    doc = decisions.parse(ws.read("decisions"))
    answered = [(item, accepted_lines(item.get("Context") or "", item.get("Answer") or ""))
                for item in (*doc.pending, *doc.resolved) if item.is_answered]
    replaced = replaced_proposals(more for _, more in answered)
    for item, more in answered:
        text = f"{item.id} (decision): {item.title}. Answer: {normalized(item.get('Answer') or '')}"
        kept = tuple(line for line in more
                     if (found_line := PROPOSAL_RE.match(line)) is None
                     or f"{item.id} {found_line.group(1)}" not in replaced)
        stamps = item.answered
        found.append(Item(item.id, "decision", item.title, text, kept, stamps[0].day if stamps else None))
    top = now.parse(ws.read("now"), max_blocks=1).top
    if top is not None:
        parts = "; ".join(f"{key}: {normalized(top.get(key) or '')}" for key in ("Did", "Human", "Next"))
        found.append(Item("NOW", "now", "Now", f"NOW ({top.heading().removeprefix('## ')}): {parts}",
                          day=top.when.day))
    return found


def accepted_lines(context: str, answer: str) -> tuple[str, ...]:
    """An answered decision's context lines as exported: an import's proposals only as the human accepted them,
    when the answer is in the form its recommendation asks for (`P1 P3`, `all`, `none`); a proposal the human
    turned down is not in force. An answer in other words is not read for them: every line stays."""
    lines = tuple(line.strip() for line in context.split("\n") if line.strip())
    said = _ANSWER_RE.fullmatch(answer.strip())
    if said is None:
        return lines
    chosen = {word.upper() for word in re.findall(r"P[0-9]+", said.group(0), re.I)}
    keep_all = said.group(0).lower().startswith("all")
    return tuple(line for line in lines
                 if (found := PROPOSAL_RE.match(line)) is None or keep_all or found.group(1) in chosen)


def replaced_proposals(accepted: Iterable[tuple[str, ...]]) -> set[str]:
    """The proposals (`D-0001 P1`) an accepted proposal of a later import replaces (` — replaces D-0001 P1`: the
    source edited the fact): out of force once the edit is accepted, as an edited lesson is once retired."""
    return {found.group(4) for lines in accepted for line in lines
            if (found := PROPOSAL_RE.match(line)) is not None and found.group(4)}


def marker_line(record: str, fmt: str) -> str:
    """The line every exported file opens its export with: the record it comes from and the format that wrote it."""
    return f"{MARKER} from {record}{_FORMAT}{fmt} -->"


def pointer(record: str, fmt: str) -> str:
    return (f"{marker_line(record, fmt)}\n{POINTER_PROSE}{record}, which is "
            "the record: change the memory there (`gitmem`), not here. The next `gitmem export` rewrites this file.")


def _bullet(item: Item) -> str:
    return "\n".join([f"- {item.line()}", *(f"  {line}" for line in item.more)])


def render_export(fmt: str, found: list[Item], record: str, today: date) -> dict[str, str]:
    """The files of `fmt`, by path relative to the target directory; `today` (the clock's) dates an entry that
    carries no day of its own (a rule) where the format needs one."""
    head = pointer(record, fmt)
    if fmt == "agent-memory-repo":
        lines = [f"- {item.line()} [source: gitmem {item.kind} {item.ref}; added: "
                 f"{(item.day or today).isoformat()}]" + "".join(f"\n  {m}" for m in item.more)
                 for item in found]
        return {agent_memory_repo.ENTRY: f"# Memory\n\n{head}\n\n## Index\n\n" + "\n".join(lines) + "\n"}
    if fmt == "gemini":
        body = "\n".join(_bullet(item) for item in found)
        return {gemini.CONTEXT_FILE: f"# gitmem\n\n{head}\n\n## {gemini.SECTION}\n\n{body}\n"}
    if fmt == "codex":
        body = "\n".join(_bullet(item) for item in found)
        return {"MEMORY.md": f"# Memory\n\n{head}\n\n{body}\n",
                "memory_summary.md": f"# Memory summary\n\n{head}\n\n{SUMMARY_PROSE}{len(found)} entries: the "
                                     "proven rules, open lessons, resolved decisions and the latest NOW block.\n"}
    topics = {f"gitmem-{_SLUG_RE.sub('-', item.ref).strip('-').lower()}.md": item for item in found}
    out = {name: (f"---\nname: {name.removesuffix('.md')}\ndescription: {_yaml_line(item.title)}\n"
                  f"type: {'feedback' if item.kind in ('rule', 'lesson') else 'project'}\n---\n"
                  f"{marker_line(record, fmt)}\n{item.line()}\n" + "".join(f"{m}\n" for m in item.more))
           for name, item in topics.items()}
    # Each index line names its entry too: one whose topic file is gone still imports back as nothing.
    index = "\n".join(f"- [{_yaml_line(item.title)}]({name}) — {item.kind} [gitmem: {item.ref}]"
                      for name, item in topics.items())
    out["MEMORY.md"] = f"# Memory\n\n{head}\n\n{index}\n"
    return out


def _yaml_line(text: str) -> str:
    """A one-line value safe in YAML and in a markdown link: no quotes, brackets or colons to misread, and short
    (DESCRIPTION_MAX): a topic file's description comes before its marker, which must stay within what `_state`
    reads (an entry's whole text follows the marker)."""
    line = re.sub(r"[\"'\[\]:#{}]", " ", normalized(text)).strip() or "entry"
    return line if len(line) <= DESCRIPTION_MAX else line[:DESCRIPTION_MAX - 1].rstrip() + "…"


def sealed(text: str) -> str:
    """`text` with its marker line sealed by a digest of the whole file as written: the next export knows whether
    the file is still only what it wrote."""
    lines = text.split("\n")
    at = next(index for index, line in enumerate(lines) if line.startswith(MARKER))
    lines[at] = f"{lines[at].removesuffix(' -->')}{_SEAL}{_digest(text)} -->"
    return "\n".join(lines)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _state(data: bytes) -> str:
    """OURS: a file an export wrote and nobody changed since (an export from before the seal is taken as one);
    CHANGED: an export's file something else then wrote to (Claude Code adds its own index lines to MEMORY.md);
    FOREIGN: no export's file."""
    if MARKER.encode() not in data[:MARKER_WITHIN]:
        return FOREIGN
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return CHANGED
    lines = text.split("\n")
    at = next((index for index, line in enumerate(lines) if line.startswith(MARKER)), None)
    found = _SEALED_RE.fullmatch(lines[at]) if at is not None else None
    if at is None or found is None:
        return OURS if at is not None and lines[at].endswith(" -->") and _SEAL not in lines[at] else CHANGED
    lines[at] = found.group(1) + " -->"
    return OURS if _digest("\n".join(lines)) == found.group(2) else CHANGED


def _record_in(data: bytes) -> str | None:
    """The memory an export's file names in its marker (`<!-- exported by gitmem from RECORD … -->`), or None."""
    head = data[:MARKER_WITHIN].decode("utf-8", "replace")
    found = _MARKER_FIELDS_RE.search(head)
    return found.group(1) if found else None


_MARKER_FIELDS_RE = re.compile(f"^{re.escape(MARKER)} from (.*?)(?:{re.escape(_FORMAT)}([a-z-]+))?"
                               f"(?:{re.escape(_SEAL)}[0-9a-f]{{16}})? -->$", re.M)


def format_in(data: bytes) -> str | None:
    """The export format an exported file names in its marker, or None (an export from before formats were named,
    or no export)."""
    found = _MARKER_FIELDS_RE.search(data[:MARKER_WITHIN].decode("utf-8", "replace"))
    return found.group(2) if found else None


def _another_formats(data: bytes, fmt: str | None) -> str | None:
    """The other export format whose file `data` is, or None: `fmt`'s own, no format named (an older export, whose
    format cannot be told), or `fmt` None (a caller that writes no format's files)."""
    found = format_in(data)
    return found if fmt is not None and found is not None and found != fmt else None


def _another_memorys(data: bytes, records: set[str] | None) -> str | None:
    """The record of another memory whose export `data` is (a CLI's folder every project shares: Codex's, a
    user's `--out`), or None when it is this memory's (one of `records`), no export, or `records` is None."""
    if records is None:
        return None
    found = _record_in(data)
    if found is None or comparable(found) in {comparable(record) for record in records}:
        return None
    return found


def _reached_from(target: Path, repository: Path | None) -> tuple[Path, str]:
    """(the folder the writes start from, the path below it): the repository's root and the target's path in it
    when the target lies in the work tree below its root; else the target itself."""
    if repository is not None:
        try:
            inside = Path(os.path.abspath(target)).relative_to(repository)
        except ValueError:
            pass
        else:
            if inside.parts:
                return repository, inside.as_posix()
    return target, ""


def write_export(target: Path, written: dict[str, str], repository: Path | None = None, *,
                 records: set[str] | None = None, fmt: str | None = None, force: bool = False) -> list[str]:
    """Write the files into `target`, and remove the earlier export's files that this one no longer has.
    Everything is checked before anything is written. `records` are the names of the memory exported
    (`exported_by.records_of`): an export of another memory there (a folder several projects share) is never
    written over nor removed. `fmt`: the format written; a file another format's export wrote is refused unless
    `force` (it is gitmem's and unchanged: nothing the human wrote), and never removed as this format's stale one.
    A target inside the work tree at `repository` is reached from its root as every file of the tree is, through
    no link: an agent can plant one there (`docs/memory` made a link to another project's memory folder), as
    import never reads a folder of the repository through one."""
    base, under = _reached_from(target, repository)

    def at(rel: str) -> str:
        return f"{under}/{rel}" if under else rel

    try:
        if not under:      # inside the tree, the confined writes make the folders, through no link
            target.mkdir(parents=True, exist_ok=True)
    except OSError as err:     # under a file, a link to nowhere, a read-only place: named, nothing written
        raise ExportRefused(f"cannot export to {target}: nothing was written", [Violation.of(
            codes.EXPORT_TARGET_REFUSED, str(target), 1, what=f"cannot be made a directory ({err.strerror or err})",
            fix="export to a directory you can write, with --out")]) from None
    problems: list[Violation] = []
    stale: list[str] = []
    for rel in written:
        what = files.why_refused(base, at(rel))
        if what is not None:
            problems.append(Violation.of(codes.EXPORT_TARGET_REFUSED, str(target / rel), 1, what=what,
                                         fix="move it away, or export to another directory with --out"))
            continue
        old = files.read_bytes(base, at(rel))
        state = _state(old) if old is not None else OURS
        other = _another_memorys(old, records) if old is not None and state != FOREIGN else None
        other_format = _another_formats(old, fmt) if old is not None and state == OURS else None
        if other is not None:
            problems.append(Violation.of(
                codes.EXPORT_TARGET_REFUSED, str(target / rel), 1,
                what=f"is the export of another memory ({other}); left alone",
                fix="export each memory to a directory of its own with --out"))
        elif other_format is not None and not force:
            problems.append(Violation.of(
                codes.EXPORT_TARGET_REFUSED, str(target / rel), 1,
                what=f"is this memory's {other_format} export, which {fmt} would replace; left alone",
                fix="export each format to a directory of its own with --out, or replace it with --force"))
        elif state == FOREIGN:
            problems.append(Violation.of(
                codes.EXPORT_TARGET_REFUSED, str(target / rel), 1, what="is not a file gitmem exported; left alone",
                fix="move it away or import it first (`gitmem import`), or export to another directory with --out"))
        elif state == CHANGED:
            problems.append(Violation.of(
                codes.EXPORT_TARGET_REFUSED, str(target / rel), 1,
                what="was written to since gitmem exported it (by its CLI or a person); left alone",
                fix="import what was added (`gitmem import`), then move the file away, or export to another "
                    "directory with --out"))
    if problems:
        raise ExportRefused(f"cannot export to {target}: nothing was written", problems)
    # Topic files are the claude format's alone: another format's export removes none (an older one's name none).
    for entry in sorted(target.glob("gitmem-*.md")) if fmt in (None, "claude") else ():
        if entry.name not in written and entry.is_file() and not entry.is_symlink():
            data = files.read_bytes(base, at(entry.name))
            # One written to since is left, as above; so is another memory's, and another format's.
            if data is not None and _state(data) == OURS and _another_memorys(data, records) is None \
                    and _another_formats(data, fmt) is None:
                stale.append(entry.name)
    for rel, text in written.items():    # another CLI's memory is output too: masked as everything shown
        files.write_bytes(base, at(rel), sealed(secrets.scrub(text)).encode("utf-8"))
    for rel in stale:
        files.remove_file(base, at(rel))
    return sorted(written)
