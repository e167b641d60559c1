"""A fact read from another CLI's memory, and the origin line that stays beside it in gitmem's memory.

The origin names the source, the file and line, the date it was written there, and a key of the source, file
and text: re-importing the same fact finds its key and adds nothing (gitmem.interop.plan).
"""
from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass
from datetime import date

from gitmem.memory.sections import SEP

LESSON = "lesson"          # lands in LESSONS, open: it awaits confirmations like any lesson
PROPOSAL = "proposal"      # listed in the batch's decision, for the human to accept
# A fact exported from a gitmem repository names the entry it came from, at the end of the entry's line (in an
# Agent Memory Repo, before the metadata the export adds, `[source: gitmem …; added: …]`, which a source reading the
# file raw keeps, as Cline's memory bank does); importing it back adds nothing. A tag the entry's text quotes,
# earlier on the line, names nothing.
EXPORTED_RE = re.compile(r"\[gitmem: ((?:L|D)-[0-9]{4,18}|R-[0-9]{2,}|NOW)\]"
                         r"(?: \[source: gitmem [^\]\n]*\])?[ \t\r]*$", re.MULTILINE)
# The marker every exported file opens with, naming the memory it was exported from (gitmem.interop.exported_by):
# the line as an export writes it, sealed (` · sha256 <16 hex>`: gitmem.interop.export) or not.
MARKER = "<!-- exported by gitmem"
# ` · format NAME`: the export format that wrote the file (gitmem.interop.export), absent in older exports.
_MARKER_RE = re.compile(f"^{re.escape(MARKER)} from (.*?)(?: · format [a-z-]+)?(?: · sha256 [0-9a-f]{{16}})? -->$",
                        re.MULTILINE)
# The prose an export writes beside its entries, opening a paragraph of its own: the pointer back to the record and
# Codex's summary line (gitmem.interop.export). In a file that carries the marker it is the export's own words, no
# fact: a source that reads paragraphs (notes, Cline's memory bank) would otherwise bring it back as one.
POINTER_PROSE = "This memory is exported from the gitmem repository "
SUMMARY_PROSE = "MEMORY.md holds "
_ORIGIN_RE = re.compile(r"^(?P<source>[a-z][a-z-]*) · (?P<file>.+):(?P<line>[0-9]+) · written (?P<written>"
                        r"[0-9]{4}-[0-9]{2}-[0-9]{2}|unknown) · key (?P<key>[0-9a-f]{12})(?: · as (?P<anchor>.+))?$")
_SPACE_RE = re.compile(r"\s+")


def normalized(text: str) -> str:
    """The text as its key counts it: runs of white space are one space, and each character in its composed
    form (NFC): a source saved again as NFD (`e` and a combining accent, as macOS and some editors write `é`)
    holds the same facts."""
    return _SPACE_RE.sub(" ", unicodedata.normalize("NFC", text)).strip()


def fact_key(source: str, file: str, text: str) -> str:
    return hashlib.sha256(f"{source}\0{file}\0{normalized(text)}".encode()).hexdigest()[:12]


@dataclass(frozen=True)
class Origin:
    """Where an imported fact came from, as written in its `- Origin:` field (lessons) or its decision line."""

    source: str
    file: str
    line: int
    written: date | None
    key: str
    anchor: str | None = None

    def __post_init__(self) -> None:
        # The file and the name are the source's text, and the origin holds them on one line: white space runs
        # fold as reading it back folds them, and the name loses the separator of the fields, or a name such as
        # `x:5 · written … · key …` would be read back as another key (and the fact imported again each time).
        object.__setattr__(self, "file", normalized(self.file))
        if self.anchor is not None:
            object.__setattr__(self, "anchor", normalized(self.anchor.replace(SEP.strip(), " ")) or None)

    def render(self) -> str:
        written = self.written.isoformat() if self.written else "unknown"
        tail = f"{SEP}as {self.anchor}" if self.anchor else ""
        return f"{self.source}{SEP}{self.file}:{self.line}{SEP}written {written}{SEP}key {self.key}{tail}"


def parse_origin(text: str) -> Origin | None:
    match = _ORIGIN_RE.match(normalized(text))
    if match is None:
        return None
    written = None if match["written"] == "unknown" else date.fromisoformat(match["written"])
    return Origin(match["source"], match["file"], int(match["line"]), written, match["key"], match["anchor"])


@dataclass(frozen=True)
class Fact:
    """One fact of a source. `anchor` is a name the source gives it that survives an edit of its text (a Claude
    Code topic file's name); `why` and `how` are the reasons and the change a correction names, when it does.
    `foreign` says its file was exported from another memory (gitmem.interop.exported_by): a tag it ends with
    names an entry there, not here."""

    source: str
    file: str
    line: int
    text: str
    kind: str
    written: date | None
    anchor: str | None = None
    why: str | None = None
    how: str | None = None
    foreign: bool = False

    @property
    def key(self) -> str:
        return fact_key(self.source, self.file, self.text)

    @property
    def origin(self) -> Origin:
        return Origin(self.source, self.file, self.line, self.written, self.key, self.anchor)

    @property
    def exported_from(self) -> str | None:
        """The entry of this memory the fact was exported from (`[gitmem: L-0003]`), or None (none, or one of
        another memory's)."""
        match = None if self.foreign else EXPORTED_RE.search(self.text)
        return match.group(1) if match else None

    def title(self, limit: int = 72) -> str:
        first = normalized(self.text.split("\n", 1)[0].lstrip("#").strip()).rstrip(".") or "imported fact"
        return first if len(first) <= limit else first[:limit - 1].rstrip() + "…"


def without_export_prose(text: str) -> str:
    """`text`, an exported file's, with the paragraphs the export wrote of its own (POINTER_PROSE under the marker,
    SUMMARY_PROSE) blanked, lines kept so every other fact keeps its line number."""
    lines = text.split("\n")
    blanking = False
    for at, line in enumerate(lines):
        before = lines[at - 1].strip() if at else ""
        opens = not before or before.startswith(MARKER)      # a paragraph opens after a blank line or the marker
        blanking = bool(line.strip()) and (blanking or opens and line.startswith((POINTER_PROSE, SUMMARY_PROSE)))
        if blanking:
            lines[at] = ""
    return "\n".join(lines)


def exported_record(text: str) -> str | None:
    """The record a file's export marker names; None when the file carries no marker (no export wrote it)."""
    found = _MARKER_RE.search(text)
    return found.group(1) if found else None
