"""A merge against its other parents: nothing that a parent appended or resolved may be lost.

The first parent is the old side of the merge's ordinary check (`run_checks`). Every other parent is checked for
what it holds: its decisions, lessons and rules are held to the same history rules (a resolved decision stays
resolved and unchanged, no decision, lesson or proven rule vanishes), and the LOG entries it appended since the two
parents split must all be in the merge, unchanged (GM301), but a close of a day the first parent closed since then,
and the other parent's closes after it, which a merge leaves out (a day is in one report). LOG is append-only
against the first parent, so the merge lists the first parent's new entries, then the other's; when that order
breaks the LOG rules (a cycle number used on both sides; under rules 1-3, times going back too), GM308 says so and
how to resolve it."""
from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass, replace

from gitmem import codes
from gitmem.checks import run_checks, written_times
from gitmem.checks.inputs import CheckInput
from gitmem.checks.violation import Violation
from gitmem.config import Config
from gitmem.gitio import Snapshot
from gitmem.memory import fences, log, positions, volumes
from gitmem.memory.common_ends import common_prefix
from gitmem.memory.decoding import decode_text
from gitmem.memory.lines import strip_trailing_blank

# The rules by which history goes missing from DECISIONS, LESSONS and RULES.
HISTORY = {codes.DECISION_RESOLVED_REWRITTEN.code, codes.DECISION_ID_VANISHED.code, codes.LESSON_VANISHED.code,
           codes.RULE_VANISHED.code}
# Checking every parent of a merge came with rules generation 2: older merges answer only to their first parent.
SINCE = 2


def check_merge(config: Config, first: Snapshot | None, others: list[tuple[str, Snapshot | None]],
          merged: Snapshot, *, generation: int = codes.RULES_VERSION) -> list[Violation]:
    """`others` are (short id, snapshot) of the parents after the first, read under `config`'s names; a merge
    made under rules before 4 also answers for LOG's times going back (gitmem.checks.written_times)."""
    found: list[Violation] = []
    for label, other in others:
        if other is None:
            continue
        found += [replace(v, message=f"{v.message} (parent {label} has it)", since=SINCE)
                  for v in run_checks(CheckInput(config, other, _with_log_of(config, other, merged)))
                  if v.code in HISTORY]
        log_first, log_other, log_merged = _unsealed(config.path("log"), first, other, merged)
        found += _log(config.path("log"), log_first, log_other, log_merged, label,
                      by_time=generation < written_times.ORDERED_BY_POSITION)
    return found


def _with_log_of(config: Config, other: Snapshot, merged: Snapshot) -> Snapshot:
    """`merged` with `other`'s LOG and volumes: what the history rules of DECISIONS, LESSONS and RULES judge against
    the other parent. LOG against it is `_log`'s (a merge appends the other parent's entries after the first's, so
    it is no append of the other's LOG, and a seal the merge made took entries of the first parent's). A snapshot
    of its own, too: what a check learns of the merge against its first parent (the seal it proves) is kept in
    `merged.facts`, and must not be learned against another parent."""
    log_path = config.path("log")
    folder = volumes.volume_folder(log_path)

    def theirs(path: str) -> bool:
        return path == log_path or posixpath.dirname(path) == folder

    return Snapshot(merged.label, lambda path: (other if theirs(path) else merged).read(path),
                    lambda path: (other if theirs(path) else merged).oid(path),
                    lambda path: (other if theirs(path) else merged).mode(path),
                    lambda name: (other if name == folder else merged).entries_in(name))


def _unsealed(path: str, first: Snapshot | None, other: Snapshot,
              merged: Snapshot) -> tuple[Snapshot | None, Snapshot, Snapshot]:
    """The sides with the volumes they do not all hold alike unsealed into their LOG (rules 6): a merge where a side
    sealed is judged on the entries each side holds, wherever they are now (volumes.unseal). The sides as they are
    when no side sealed since they split, or a side cannot list its volumes."""
    folder = volumes.volume_folder(path)
    listings = [side.entries_in(folder) if side is not None else {} for side in (first, other, merged)]
    held = [{number: str(listing[name][0]) for number, name in volumes.numbered(path, listing)}
            for listing in listings if listing is not None]
    if len(held) < 3 or all(side == held[0] for side in held):
        return first, other, merged
    shared = volumes.shared_count(*held)
    return (_unsealed_side(path, first, shared) if first is not None else None, _unsealed_side(path, other, shared),
            _unsealed_side(path, merged, shared))


def _unsealed_side(path: str, side: Snapshot, shared: int) -> Snapshot:
    listing = side.entries_in(volumes.volume_folder(path)) or {}
    newer = [(number, name) for number, name in volumes.numbered(path, listing) if number > shared]
    live = side.read(path)
    if not newer or live is None:
        return side
    text = volumes.unseal(live, path, [(number, side.read(name) or b"") for number, name in newer])
    if text is None:
        return side
    return side.with_file(path, text, seen_as="unsealed")


def as_merged(config: Config, fork: Snapshot | None, first: Snapshot | None, other: Snapshot,
              merged: Snapshot) -> Snapshot:
    """`other` (a merge's later parent) as the merge holds it. Decision and lesson IDs are positions
    (gitmem.memory.positions): when both sides asked a decision or added a lesson since they split at `fork`, the
    merge renames `other`'s new ones after `first`'s, answers, confirmations and all, so they are judged under
    their new IDs, not as answers removed (GM205), lessons gone (GM405) or lines the merge wrote.

    A merge made by hand, without the renaming, is judged as `other` holds it: the view that loses none of
    `other`'s history is the one the merge holds; when both lose some, the renamed one is reported."""
    paths = {role: config.path(role) for role in ("log", "decisions", "lessons")}
    sides = (fork, first, other)
    read = {(index, role): side.read(paths[role]) if side is not None else None
            for index, side in enumerate(sides) for role in ("decisions", "lessons")}
    moved = [role for role in ("decisions", "lessons")
             if read[2, role] is not None and read[0, role] not in (read[1, role], read[2, role])]
    if not moved:
        return other        # one side left them as they were: nothing to rename, and LOG (75 MB at 100x) unread
    shifts = positions.side_shifts(*(positions.SideFiles(
        side.read(paths["log"]) if side is not None else None, read[index, "decisions"], read[index, "lessons"])
        for index, side in enumerate(sides)))
    if not shifts.ids:
        return other
    renumber = {"decisions": positions.renumber_decisions, "lessons": positions.renumber_lessons}
    renamed_files = {paths[role]: renumber[role](read[0, role], read[2, role] or b"", shifts) for role in moved}
    renamed = Snapshot(other.label, lambda name: renamed_files[name] if name in renamed_files else other.read(name))
    if not _loses_history(config, renamed, merged) or _loses_history(config, other, merged):
        return renamed
    return other


def _loses_history(config: Config, other: Snapshot, merged: Snapshot) -> bool:
    return any(v.code in HISTORY for v in run_checks(CheckInput(config, other, _with_log_of(config, other, merged))))


@dataclass(frozen=True)
class _Entries:
    entries: tuple[log.LogEntry, ...]
    texts: tuple[str, ...]          # each entry as written: its heading and body lines


def _entries(data: bytes, start: int) -> _Entries:
    """The entries of a LOG from `start`, a line start outside fenced code (a heading, or the file's start)."""
    text = decode_text(data[start:])
    lines = text.split("\n")
    first_line = data.count(b"\n", 0, start) + 1
    entries = log.parse(text, first_line=first_line, expect_title=False).entries
    raw = tuple("\n".join(lines[e.line - first_line:e.end - first_line + 1]) for e in entries)
    return _Entries(entries, raw)


def _log(path: str, first: Snapshot | None, other: Snapshot, merged: Snapshot, label: str, *,
         by_time: bool) -> list[Violation]:
    theirs, mine = other.read(path), merged.read(path)
    if theirs is None or mine is None:
        return []
    ours = (first.read(path) if first is not None else None) or b""
    split = common_prefix(ours, theirs)
    # From the last heading at or before the split (outside fences): every entry after it is new on one side.
    line_start = theirs.rfind(b"\n", 0, split) + 1
    start = fences.last_heading_before(theirs, b"## ", line_start + 3) or 0
    theirs_new = _entries(theirs, start)
    ours_new = _entries(ours, start) if ours[:start] == theirs[:start] else _entries(ours, 0)
    kept = _entries(mine, start) if mine[:start] == theirs[:start] else _entries(mine, 0)
    in_merge, in_ours = set(kept.texts), set(ours_new.texts)
    # A cycle number is a position in the merged history (gitmem.publish.renumber): the other parent's cycle
    # entry may be in the merge under another number, unchanged otherwise.
    # A merge may also bring an entry in dated again (after entries written later than it), its own heading under
    # `- Merged:` (merged_entry).
    renumbered = {_origin(entry): entry for entry in kept.entries}
    end_line = mine.count(b"\n") or 1
    stale = _closed_first(theirs_new, ours_new, in_merge)
    found = [Violation.of(codes.LOG_NOT_APPEND_ONLY, path, end_line, "dropped_by_merge",
                          heading=entry.heading().removeprefix("## "), parent=label)
             for entry, raw in zip(theirs_new.entries, theirs_new.texts, strict=False)
             if raw not in in_merge and raw not in stale and not _kept(entry, renumbered)]
    added = [entry if raw in in_merge else renumbered.get(_origin(entry), entry)
             for entry, raw in zip(theirs_new.entries, theirs_new.texts, strict=False)
             if raw not in in_ours and raw not in stale]
    mine_added = [entry for entry, raw in zip(ours_new.entries, ours_new.texts, strict=False)
                  if raw not in set(theirs_new.texts)]
    if added and mine_added and not log.ordered(mine_added, added, by_time=by_time):
        line = added[0].line if added[0] in kept.entries else next(
            (e.line for e, raw in zip(kept.entries, kept.texts, strict=False)
             if raw == _raw_of(theirs_new, added[0])), end_line)
        variant = "other_way" if log.ordered(added, mine_added, by_time=by_time) else ""
        found.append(Violation.of(codes.LOG_MERGE_UNORDERED, path, line, variant, parent=label,
                                  theirs=_describe(added), ours=_describe(mine_added),
                                  last=max((e.cycle for e in mine_added if e.cycle is not None), default=0)))
    return found


def _closed_first(theirs: _Entries, ours: _Entries, in_merge: set[str]) -> frozenset[str]:
    """The other parent's close entries the merge may leave out: from its first close of a day the first parent
    closed since they parted, every close of its own after it, as `gitmem merge` leaves them out
    (log.closes_left_out_from); a day is in one report. Only those the merge does not hold."""
    shared = set(theirs.texts) & set(ours.texts)
    closed = {day for entry, raw in zip(ours.entries, ours.texts, strict=False)
              if _is_close(entry) and raw not in shared and (day := log.closed_day(entry)) is not None}
    if not closed:
        return frozenset()
    # Only close entries themselves: an amendment (a human's correction of a close) is never left out.
    own = [(raw, {day} if (day := log.closed_day(entry)) is not None else set())
           for entry, raw in zip(theirs.entries, theirs.texts, strict=False)
           if _is_close(entry) and raw not in shared]
    left = own[log.closes_left_out_from([days for _, days in own], closed):]
    return frozenset(raw for raw, _ in left if raw not in in_merge)


def _is_close(entry: log.LogEntry) -> bool:
    """A close entry, not an amendment of one: no cycle number, and no line it supersedes."""
    return entry.cycle is None and entry.amends is None


def _raw_of(found: _Entries, entry: log.LogEntry) -> str:
    return found.texts[found.entries.index(entry)]


def _origin(entry: log.LogEntry) -> tuple[str, str | None, str]:
    """What a renumbering or a merge's stamp keeps of an entry: its own time, outcome and body, but the
    `- Arrived:` line a merge gives a close entry for the other side's cycles that land above it
    (gitmem.publish.merge: it never read them, so the next close reports them)."""
    merged = log.merged_from(entry)
    if merged is not None and (parsed := log.parse_heading(merged[0])) is not None:
        return str(parsed[0]), parsed[2], _written(merged[1])
    return str(entry.when), entry.outcome, _written(strip_trailing_blank(entry.body))


def _kept(entry: log.LogEntry, renumbered: dict[tuple[str, str | None, str], log.LogEntry]) -> bool:
    """Whether the merge holds the other parent's `entry` renumbered or stamped: a close there may name more
    cycles as arrived, never fewer (each one it names is reported by the next close)."""
    found = renumbered.get(_origin(entry))
    return found is not None and log.arrived_cycles(entry) <= log.arrived_cycles(found)


def _written(body: Sequence[str]) -> str:
    return "\n".join(line for line in body if not line.startswith(f"- {log.ARRIVED}: "))


def _describe(entries: list[log.LogEntry]) -> str:
    cycles = [e.cycle for e in entries if e.cycle is not None]
    what = (f"cycle {cycles[0]}" if len(cycles) == 1 else f"cycles {cycles[0]}-{cycles[-1]}") if cycles \
        else f"{len(entries)} close entr{'y' if len(entries) == 1 else 'ies'}"
    return f"{what} from {entries[0].when}"
