"""LOG's sealed volumes (rules 6): LOG.md keeps its newest entries; older ones move, byte for byte, into numbered
files beside it that never change again.

Why: git stores every version of a file whole, so a LOG that only grows costs each cycle a blob of all of
history (75 MB at 100x: 0.8 s of hashing and compressing, and as much disk). A volume is written once, and
LOG.md stays between VOLUME_ENTRIES and SEAL_AT entries long, so a cycle's write costs the same in year ten as
in week one. History is still all there, in order: the volumes by number, then LOG.md.

A seal is exact, so that `check` and `verify` can prove it from the change alone (`sealed_from`): each volume is
VOLUME title lines and then the bytes that left LOG.md, from one entry's heading to the heading of the first
entry kept; LOG.md keeps its own title and preamble. An amendment names its entry by LOG.md's line number
(rules 4), so an amendment that stays names the line its entry moved up to, and an entry is sealed only with
every amendment of it. Sealing is deterministic: two writers that seal the same LOG write the same volumes.

Pure functions over bytes; the runner writes what they plan (gitmem.memory_writer), the checks prove it.
"""
from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence
from functools import cache

from gitmem.memory import fences, log
from gitmem.records import record

VOLUME_ENTRIES = 200           # entries a volume holds: about a month of cycles at 8 a day, ~300 KB
SEAL_AT = 2 * VOLUME_ENTRIES   # LOG.md entries at which its oldest VOLUME_ENTRIES are sealed
FOLDER = "history"             # beside LOG.md
NOW_BLOCKS_KEPT = 100          # NOW.md's newest blocks the runner keeps when it writes NOW (`keep_newest_blocks`)
_HEADING = b"## "


def volume_folder(log_path: str) -> str:
    """The folder of LOG's volumes: `history/` beside LOG.md (repository-relative, '/'-separated)."""
    return posixpath.join(posixpath.dirname(log_path), FOLDER)


def _stem(log_path: str) -> str:
    name = posixpath.basename(log_path)
    return name[:-3] if name.lower().endswith(".md") else name


def volume_path(log_path: str, number: int) -> str:
    """`history/LOG-0001.md` for volume 1 of `LOG.md`."""
    return posixpath.join(volume_folder(log_path), f"{_stem(log_path)}-{number:04d}.md")


def volume_glob(log_path: str) -> str:
    """A glob of every name a volume of `log_path` could take, and its misspellings (`history/LOG-*`)."""
    return posixpath.join(volume_folder(log_path), f"{_stem(log_path)}-*")


@cache
def _volume_name(log_path: str) -> tuple[str, re.Pattern[str]]:
    """The folder of `log_path`'s volumes and the pattern of their names, compiled once: a check lists the folder
    (269 volumes at 100x) several times a process."""
    return volume_folder(log_path), re.compile(re.escape(_stem(log_path)) + r"-([0-9]{4,9})\.md")


def volume_number(log_path: str, path: str) -> int | None:
    """The number of the volume of `log_path` at `path`; None when `path` names no volume of it."""
    folder, name = _volume_name(log_path)
    if posixpath.dirname(path) != folder:
        return None
    found = name.fullmatch(posixpath.basename(path))
    if found is None or found.group(1) != f"{int(found.group(1)):04d}":     # one spelling per number
        return None
    number = int(found.group(1))
    return number if number >= 1 else None


def named(log_path: str, paths: Iterable[str]) -> list[tuple[int, str]]:
    """The files among `paths` named like volumes of `log_path`, as (number, path), by number: volumes or not."""
    return sorted((n, p) for p in paths if (n := volume_number(log_path, p)) is not None)


def numbered(log_path: str, paths: Iterable[str]) -> list[tuple[int, str]]:
    """The volumes among `paths`, as (number, path), by number: the run 1, 2, 3, ... that seals write, up to the
    first number missing. A file named like a volume past a gap is no volume (a project's own `history/LOG-0005.md`
    from before rules 6, a plant): seals never skip a number, and the runner never seals the run up to such a file
    (`stray_after`), so it never becomes history when the numbers reach it."""
    run: list[tuple[int, str]] = []
    for number, path in named(log_path, paths):
        if number != len(run) + 1:
            break
        run.append((number, path))
    return run


def stray_after(log_path: str, paths: Iterable[str], last: int) -> str | None:
    """The file among `paths` named like the volume after `last` (the last a seal would write), which a seal that
    ends at `last` would take into the run of volumes unread (`numbered`); None when there is none."""
    return next((path for number, path in named(log_path, paths) if number == last + 1), None)


def title(log_path: str, number: int) -> bytes:
    """What a volume holds before its entries: always the same for the same number."""
    return (f"# {_stem(log_path)} · volume {number}\n"
            f"<!--\nSealed: these entries left {posixpath.basename(log_path)} unchanged and are never edited.\n"
            "Search them with `gitmem recall`.\n-->\n\n").encode()


def entry_starts(data: bytes) -> list[int]:
    """Offsets of the entries' headings (every `## ` line outside fenced code: what `log.parse` splits at)."""
    return list(fences.headings(data, _HEADING))


def _amended_lines(data: bytes, start: int, end: int | None = None) -> list[tuple[int, int]]:
    """(offset of the heading, line it amends) for each amendment in data[start:end]."""
    end = len(data) if end is None else end
    if data.find(log.AMENDS.encode(), start, end) < 0:       # C speed, no copy: most LOGs amend nothing
        return []
    found = []
    for at in fences.headings(data, _HEADING, start, end):
        parsed = log.parse_any_heading(fences.line_starting_at(data, at)[3:].decode("utf-8", "replace"))
        if parsed is not None and parsed[3] is not None:
            found.append((at, parsed[3]))
    return found


def _shifted(data: bytes, start: int, lower: int, end: int | None = None) -> bytes:
    """data[start:end] with each amendment's line number lowered by `lower` (the lines its entry moved up)."""
    end = len(data) if end is None else end
    amended = _amended_lines(data, start, end)
    if not amended or lower == 0:
        return data[start:end]
    parts, at = [], start
    for heading, line in amended:
        stop = data.find(b"\n", heading, end)
        stop = end if stop < 0 else stop
        old = f"{log.AMENDS} {line}".encode()
        parts += [data[at:heading], data[heading:stop].replace(old, f"{log.AMENDS} {line - lower}".encode(), 1)]
        at = stop
    parts.append(data[at:end])
    return b"".join(parts)


def _title_lines(log_path: str, number: int) -> int:
    """The line of a volume's first entry heading, below its title."""
    return title(log_path, number).count(b"\n") + 1


@record(frozen=True)
class Seal:
    live: bytes                                  # LOG.md after the seal
    volumes: tuple[tuple[int, bytes], ...]       # (number, whole file) of each new volume, in order


def plan(data: bytes, log_path: str, next_number: int, *, per_volume: int = VOLUME_ENTRIES,
         seal_at: int = SEAL_AT) -> Seal | None:
    """The seal of LOG.md's bytes `data`: while LOG.md holds `seal_at` entries or more, its oldest `per_volume`
    go into volume `next_number` (then the next). None when nothing is due. A cut never separates an entry from
    an amendment of it: the volume then ends before the amended entry.

    A volume reads on its own: an amendment in it names the line its entry has in the volume (`amends line N`
    counts the volume's lines, as LOG.md's amendments count LOG.md's), and one left in LOG.md the line its entry
    moved up to. Several volumes cut at once are the volumes one cut at a time would give."""
    starts = entry_starts(data)
    if len(starts) < seal_at or per_volume < 1 or fences.open_after(data):
        return None           # a LOG that ends inside a fence is refused by its checks first (GM921)
    first = starts[0]
    first_line = data.count(b"\n", 0, first) + 1
    amended = _amended_lines(data, first)
    line_of = _line_numbers(data, starts)
    volumes: list[tuple[int, bytes]] = []
    index, number = 0, next_number
    while len(starts) - index >= seal_at:
        cut_index = index + per_volume
        if cut_index >= len(starts):     # LOG.md keeps at least one entry
            break
        # An amendment that stays must keep its entry: cut before the earliest entry such an amendment names.
        while True:
            cut_at = starts[cut_index]
            named = [line for heading, line in amended if heading >= cut_at and line < line_of[cut_at]]
            if not named:
                break
            earliest = min(named)
            cut_index = max((i for i, at in enumerate(starts) if line_of[at] <= earliest), default=index)
            if cut_index <= index:
                break
        if cut_index <= index:
            break
        span_start, span_end = starts[index], starts[cut_index]
        lower = line_of[span_start] - _title_lines(log_path, number)
        volumes.append((number, title(log_path, number) + _shifted(data, span_start, lower, span_end)))
        index, number = cut_index, number + 1
    if not volumes:
        return None
    cut = starts[index]
    return Seal(data[:first] + _shifted(data, cut, line_of[cut] - first_line), tuple(volumes))


def _line_numbers(data: bytes, offsets: Sequence[int]) -> dict[int, int]:
    """The 1-based line of each offset (ascending), in one pass."""
    lines, line, at = {}, 1, 0
    for offset in offsets:
        line += data.count(b"\n", at, offset)
        lines[offset], at = line, offset
    return lines


def sealed_from(old: bytes, log_path: str, added: Sequence[tuple[int, bytes]]) -> bytes | None:
    """What LOG.md must read after the volumes `added` ((number, whole file), in number order) took its oldest
    entries from `old`: old's title and preamble, then the entries left, amendments renumbered. None when the
    volumes do not hold exactly what `plan` would have cut from `old` at their boundaries (whole entries, in
    order, each volume's title as `title` writes it, amendments renumbered to the volume's lines), or an
    amendment names an entry in an earlier volume than its own."""
    starts = entry_starts(old)
    if not starts or not added:
        return None
    index_of = {at: i for i, at in enumerate(starts)}
    first = at = starts[0]
    first_line = line = old.count(b"\n", 0, first) + 1
    for number, content in added:
        head = title(log_path, number)
        body = content[len(head):]
        entries = len(entry_starts(body)) if content.startswith(head) and body.startswith(_HEADING) else 0
        end_index = index_of[at] + entries
        if entries == 0 or end_index >= len(starts):     # LOG.md keeps at least one entry
            return None
        cut = starts[end_index]
        if any(named < line for _, named in _amended_lines(old, at, cut)):
            return None
        if body != _shifted(old, at, line - _title_lines(log_path, number), cut):
            return None
        line += old.count(b"\n", at, cut)
        at = cut
    if any(named < line for _, named in _amended_lines(old, at)):
        return None
    return old[:first] + _shifted(old, at, line - first_line)


def keep_newest_blocks(data: bytes, keep: int) -> bytes:
    """NOW.md's bytes with only its newest `keep` blocks (rules 6): older blocks leave the file (git keeps every
    one of them, and the LOG entry of each cycle holds what its block said). Unchanged when it holds no more."""
    starts = list(fences.headings(data, _HEADING))
    if len(starts) <= keep or keep < 1:
        return data
    kept = data[:starts[keep]].rstrip(b"\n")
    return kept + b"\n"


def unseal(live: bytes, log_path: str, sealed: Sequence[tuple[int, bytes]]) -> bytes | None:
    """The LOG the volumes `sealed` ((number, whole file), in number order) were cut from, with `live` (LOG.md
    after them) at its end: the reverse of `plan`, so that a merge can join two sides that sealed different
    entries as the one text each side's history reads (then seal the result again). Every amendment names the
    line its entry stands on in that text again. None when a volume does not open with its title."""
    if not sealed:
        return live
    starts = entry_starts(live)
    first = starts[0] if starts else len(live)
    line = first_line = live.count(b"\n", 0, first) + 1
    parts = [live[:first]]
    for number, content in sealed:
        head = title(log_path, number)
        if not content.startswith(head):
            return None
        parts.append(_shifted(content, len(head), _title_lines(log_path, number) - line))
        line += content.count(b"\n", len(head))
    parts.append(_shifted(live, first, first_line - line))
    return b"".join(parts)


def shared_count(*held: Mapping[int, str]) -> int:
    """How many volumes, from number 1 on, every side holds alike ((number -> blob id) of each): what a merge of
    the sides keeps as it is; each side's later volumes are unsealed into its LOG text for the merge (`unseal`)."""
    shared = 0
    while (blob := held[0].get(shared + 1) if held else None) is not None and all(
            side.get(shared + 1) == blob for side in held):
        shared += 1
    return shared


def seal_shown(old: bytes, new: bytes, log_path: str = "LOG.md") -> tuple[int, bytes] | None:
    """(where in `old` the entries kept start, what `old` keeps) of the seal `new` (a later LOG.md) shows, when `new`
    is `old` with its oldest entries sealed away and then appended to; None when `new` shows no such seal. From the
    two texts alone, without the volumes: a seal takes whole entries from the start of `old`, so the entries that
    left are `old`'s own bytes (a reader that sees LOG.md alone, a merge driver or a renumbering, finds a sealed
    side's new entries by it)."""
    starts, new_starts = entry_starts(old), entry_starts(new)
    if len(starts) < 2 or not new_starts:
        return None
    heading = fences.line_starting_at(new, new_starts[0])
    for cut in starts[1:]:
        if fences.line_starting_at(old, cut) != heading:
            continue
        kept = sealed_from(old, log_path, [(1, title(log_path, 1) + old[starts[0]:cut])])
        if kept is not None and log.append_verdict(kept, new).ok:
            return cut, kept
    return None


# -- reading sealed history (readers of all of it: recall, report, export, the close's day) --------------------

def volume_entries(data: bytes) -> tuple[log.LogEntry, ...]:
    """A volume's entries as readers take them (`log.live`): an amended entry gives way to its amendment, which a
    seal keeps in the same volume, naming the entry's line in the volume."""
    return log.live(log.parse(data.decode("utf-8", "replace"), expect_title=False).entries)


def body(data: bytes) -> bytes:
    """A volume's entries, without its title: the bytes that left LOG.md."""
    first = fences.first_heading(data, _HEADING)
    return data[first:] if first is not None else b""
