"""After the agent ran: enforce permissions, then make sure the cycle left exactly one LOG entry and one NOW block.

Works on the memory files in the work tree against their text at HEAD. The runner's own writes go through
`gitmem.memory_writer.MemoryWriter`, so they are validated and timestamped by the clock like every other write.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import date, datetime

from gitmem import codes, gitio
from gitmem.config import ROLES
from gitmem.confined import files
from gitmem.cycle import foreign, permissions
from gitmem.memory import decisions, lessons, log, now
from gitmem.memory.decoding import decode_file, decode_file_text, decode_text, encoded
from gitmem.memory.fields import field_value, render_field, without_fields
from gitmem.memory.lines import one_line, strip_trailing_blank
from gitmem.memory.timestamps import Timestamp
from gitmem.memory_writer import MemoryWriter
from gitmem.workspace import Clock, Workspace

NO_TASK = "no task logged"


@dataclass
class Settled:
    cycle: int
    task: str
    outcome: str
    notes: list[str] = field(default_factory=list)     # what the runner changed, also in Evidence
    wrote_log: bool = False                             # the runner wrote the LOG entry itself (Rule 0)


@dataclass(frozen=True)
class MemoryFiles:
    """The memory files' bytes by role (None: missing), decoded only for a step that reads one as text: at 100x
    LOG is 75 MB, and a cycle that leaves it as it found it never needs its text."""

    data: dict[str, bytes | None]
    in_worktree: bool = True     # read from the work tree: decoded once per process (else a commit's blobs)

    def text(self, role: str) -> str | None:
        found = self.data.get(role)
        if found is None:
            return None
        return decode_file_text(found) if self.in_worktree else decode_text(found)

    def same(self, other: MemoryFiles, role: str) -> bool:
        """Whether `other` holds the very bytes this holds for `role` (so the same text)."""
        mine, theirs = self.data.get(role), other.data.get(role)
        return mine is theirs or mine == theirs


def memory_files(ws: Workspace) -> MemoryFiles:
    """The memory files in the work tree."""
    return MemoryFiles({role: files.read_bytes(ws.root, ws.config.path(role)) for role in ROLES})


def memory_files_at(ws: Workspace, commit_id: str) -> MemoryFiles:
    """The memory files as a commit holds them."""
    return MemoryFiles({role: gitio.file_at(ws.repo, commit_id, ws.config.path(role)) for role in ROLES},
                       in_worktree=False)


NOT_REPORTED = "tokens: not reported"


def usage_line(usage: dict[str, float]) -> str:
    """`tokens: input 1200, output 300, cache_read_input_tokens 900, total 2400`; a cost the backend reported goes
    on the same line (`cost_usd 0.0123`), outside the total (gitmem.report reads both). When the backend reported
    nothing, `tokens: not reported`: the runner's line is always the entry's last `tokens:` line, the one that
    counts (gitmem.memory.usage), so a `tokens:` line the agent wrote never stands in for it."""
    if not usage:
        return NOT_REPORTED
    names = {"input_tokens": "input", "output_tokens": "output"}
    parts = [f"{names.get(key, key)} {_number(value)}" for key, value in usage.items()
             if isinstance(value, (int, float)) and not isinstance(value, bool)]
    total = sum(int(v) for k, v in usage.items() if isinstance(v, (int, float)) and k.endswith("tokens"))
    return f"tokens: {', '.join(parts)}, total {total}"


def _number(value: float) -> str:
    return str(value) if isinstance(value, int) else f"{value:.6f}".rstrip("0").rstrip(".") or "0"


def context_note(tokens: int, limit: int) -> str:
    """`context 5222 tokens of 60000 (estimate)`: the reading budget the cycle was given, for its Evidence as a
    `runner:` line (gitmem.report charts it against the budget). The runner counts with the offline estimate."""
    return f"context {tokens} tokens of {limit} (estimate)"


def settle(ws: Workspace, old: MemoryFiles, *, cycle: int, clock: Clock | None,
           notes: list[str], usage: dict[str, float], why_no_log: str, started: str,
           kept: str | None = None, began: datetime | None = None) -> Settled:
    """Revert forbidden edits, then normalise to one LOG entry and one NOW block for `cycle`.

    The entry records the commit the cycle started from (`Started`), which says what it was shown as newly
    resolved (gitmem.cycle.baseline), and the branch that keeps commits made in the checkout during the cycle
    (`Kept`), which the close reports. The agent cannot set these fields: the runner writes them.
    """
    memory = MemoryWriter(ws, clock=clock, author_email=ws.config.agent.email)
    # Judged and corrected as one step: a write landing in between (a straggler of the agent's, a human's
    # `gitmem log add`) would be judged against text the runner then overwrites.
    with memory.locked():
        return _settle(memory, old, cycle=cycle, notes=notes, usage=usage, why_no_log=why_no_log,
                       started=started, kept=kept, began=began)


def _settle(memory: MemoryWriter, old: MemoryFiles, *, cycle: int, notes: list[str],
            usage: dict[str, float], why_no_log: str, started: str, kept: str | None,
            began: datetime | None) -> Settled:
    ws = memory.workspace
    window = Window(began, memory.now())
    unreadable = _restore_unreadable(ws, old)
    new = memory_files(ws)
    # A file holding the bytes the cycle found holds its text: the permissions have nothing to judge in it.
    changed = [role for role in ROLES if not old.same(new, role)]
    enforcement = permissions.enforce({role: old.text(role) for role in changed},
                                      {role: new.text(role) for role in changed})
    enforcement.notes[:0] = [*unreadable, *foreign.revert(ws)]
    for role, text in enforcement.texts.items():
        files.write_bytes(ws.root, ws.config.path(role), text.encode("utf-8"))
    dated = _date_new_decisions(memory, old.text("decisions") or "", window)
    dated += _date_new_lessons(memory, old.text("lessons") or "", cycle, window)
    evidence = [f"runner: {note}" for note in [*notes, *enforcement.notes, *dated]]
    evidence.append(usage_line(usage))
    runner_fields = {log.STARTED: started, **({log.KEPT: kept} if kept else {})}
    settled = _settle_log(memory, old, cycle, evidence, why_no_log, runner_fields, window)
    settled.notes = enforcement.notes + settled.notes
    _settle_now(memory, old.text("now") or "", settled, window)
    return settled


def _restore_unreadable(ws: Workspace, old: MemoryFiles) -> list[str]:
    """A memory file the agent left as bytes that are not UTF-8 reads as empty text, which each judge after this
    takes for the agent emptying it: DECISIONS rebuilt from nothing lost the text around its decisions. The file
    is put back as the cycle found it, whole: the agent's bytes are memory no reader can read. A file the agent
    left as the cycle found it is not the agent's (nor decoded here: LOG is 75 MB at 100x)."""
    notes: list[str] = []
    for role in ROLES:
        before_data, rel = old.data.get(role), ws.config.path(role)
        data = files.read_bytes(ws.root, rel) if before_data is not None else None
        if before_data is None or data is None or data is before_data or data == before_data or \
                not any(p.code == codes.NOT_UTF8.code for p in decode_file(data)[1]):
            continue
        files.write_bytes(ws.root, rel, encoded(old.text(role) or ""))
        notes.append(f"restored {rel} as the cycle found it: the agent left bytes that are not UTF-8 text")
    return notes


@dataclass(frozen=True)
class Window:
    """The cycle's time by the clock: from when it began to now. An entry the runner keeps is dated inside it;
    one dated elsewhere (a hand-written 2099, or the past) gets the clock's time now."""

    began: datetime | None
    now: Timestamp

    def date(self, when: Timestamp) -> Timestamp:
        start = self.began.replace(second=0, microsecond=0) if self.began is not None else self.now.moment
        return when if start <= when.moment <= self.now.moment else self.now


def _cycle_day(window: Window, day: date) -> date:
    """`day` when the cycle ran on it; else the clock's day (as `Window.date` does for a time)."""
    first = Timestamp.from_datetime(window.began).day if window.began is not None else window.now.day
    return day if first <= day <= window.now.day else window.now.day


def _date_new_decisions(memory: MemoryWriter, before: str, window: Window) -> list[str]:
    """A decision asked during the cycle carries the cycle's time too: a hand-written `Asked: 2099-…` would
    hide it from every report of the days it waits."""
    text = memory.read("decisions")
    known = {item.id for item in decisions.parse(before).all}
    lines, notes = text.split("\n"), []
    for item in decisions.parse(text).pending:
        asked = item.asked
        field = next((f for f in item.fields if f.key == "Asked"), None)
        if item.id in known or asked is None or field is None or window.date(asked) is asked:
            continue
        line = lines[field.line - 1]
        if str(asked) in line:
            lines[field.line - 1] = line.replace(str(asked), str(window.now), 1)
            notes.append(f"restored the time {item.id} was asked to the clock's {window.now} (it said {asked})")
    if notes:
        files.write_bytes(memory.root, memory.config.path("decisions"), "\n".join(lines).encode("utf-8"))
    return notes


def _date_new_lessons(memory: MemoryWriter, before: str, cycle: int, window: Window) -> list[str]:
    """The days and cycles of the lesson lines written during the cycle, by the runner's clock and count.

    - A `Confirmed` line is this cycle's event: it records this cycle and a day of it, as `gitmem lesson confirm`
      writes it in a cycle. A hand-written line, or one the agent wrote with its own GITMEM_CYCLE, that cites
      another cycle would stand in memory for a cycle that confirmed nothing, and refuse the real confirmation
      of the cycle it names (GM403). A lesson is confirmed once per cycle and by a later cycle than added it: a
      second new line of the cycle, and one on a lesson the cycle added, are removed.
    - A new lesson's `Happened` may name an earlier cycle and day (a lesson is often about an earlier mistake),
      never a later one: a cycle past this one becomes this one, a day after the clock's the clock's day.
    """
    text = memory.read("lessons")
    old = {item.id: item for item in lessons.parse(before).lessons}
    lines: list[str | None] = list(text.split("\n"))
    notes: list[str] = []
    for item in lessons.parse(text).lessons:
        known = old.get(item.id)
        if known == item:        # unchanged, at the same lines: every line of it was there before the cycle
            continue
        seen = Counter(f.value for f in known.fields if f.key == "Confirmed") if known is not None else Counter()
        confirmed = {event.cycle for _, event in known.confirmations if event is not None} if known else set()
        for found in item.fields:
            if found.key not in ("Happened", "Confirmed") or (known is not None and found.key == "Happened"):
                continue
            if seen[found.value] > 0:          # there before the cycle: not the cycle's to date
                seen[found.value] -= 1
                continue
            event = lessons.parse_event(found)
            if event is None:
                continue          # a line that does not parse is the checks' to name
            if found.key == "Confirmed" and (known is None or cycle in confirmed):
                lines[found.line - 1:found.end] = [None] * (found.end - found.line + 1)
                why = "a later cycle confirms a lesson" if known is None else "a lesson is confirmed once per cycle"
                notes.append(f"removed a Confirmed line of {item.id} (it said cycle {event.cycle}): {why}")
                continue
            if found.key == "Confirmed":
                confirmed.add(cycle)
                day, number = _cycle_day(window, event.day), cycle
            else:
                day, number = min(event.day, window.now.day), min(event.cycle, cycle)
            if (day, number) == (event.day, event.cycle):
                continue
            lines[found.line - 1] = lessons.with_event(lines[found.line - 1] or "", day, number)
            notes.append(f"restored {item.id}'s {found.key} line to {day.isoformat()} (cycle {number}), by the "
                         f"runner's clock and count (it said {event.day.isoformat()} (cycle {event.cycle}))")
    if notes:
        kept = "\n".join(line for line in lines if line is not None)
        files.write_bytes(memory.root, memory.config.path("lessons"), kept.encode("utf-8"))
    return notes


def _settle_log(memory: MemoryWriter, old: MemoryFiles, cycle: int, evidence: list[str], why_no_log: str,
                runner_fields: dict[str, str], window: Window) -> Settled:
    found = MemoryFiles({"log": files.read_bytes(memory.root, memory.config.path("log"))})
    raw = found.data.get("log") or b""
    # As the cycle found it, in UTF-8 as the text encodes it (no BOM, no CR): the bytes stand for the text, which
    # is not decoded (75 MB at 100x).
    if found.same(old, "log") and not raw.startswith(b"\xef\xbb\xbf") and b"\r" not in raw:
        before = new = raw
    else:
        before, new = encoded(old.text("log") or ""), encoded(memory.read("log"))
    # The agent's entries, read as every judge of LOG reads an append (`log.appended_entries`, from the verdict
    # of GM301): a rewrite of the old lines has none. Text the agent put above its first heading is kept out,
    # as the entry is rebuilt after the old LOG anyway.
    verdict = log.append_verdict(before, new)
    located = verdict.ok or verdict.variant in (log.APPENDED_TO_ENTRY, log.IN_OPEN_FENCE)
    entries = list(log.appended_entries(new, log.Append(verdict.start, verdict.open_))) if located else []
    extra_notes: list[str] = []
    # A close entry is the daily close's to write: one the agent wrote would report the day's cycles and close it
    # for every reader, and, kept as the cycle's own entry, would leave the cycle without a Task.
    closes = [e for e in entries if e.cycle is None and e.amends is None]
    if closes:
        entries = [e for e in entries if e not in closes]
        headings = "; ".join(e.heading().removeprefix("## ") for e in closes)
        extra_notes.append(f"dropped the close entr{'y' if len(closes) == 1 else 'ies'} the agent wrote ({headings}): "
                           "only the close writes one")
    if not entries:
        _restore_bytes(memory, "log", before)
        entry = memory.add_log_entry(
            task=NO_TASK, outcome=log.Outcome.NO_BUILD, cycle=cycle,
            result=f"no build: the agent ended without writing a LOG entry (Rule 0); {why_no_log}",
            evidence="\n".join([f"runner: {n}" for n in extra_notes] + evidence) or None, extra=runner_fields)
        return Settled(cycle, entry.get("Task") or NO_TASK, log.Outcome.NO_BUILD, extra_notes, wrote_log=True)
    chosen = entries[-1]
    if len(entries) > 1:
        dropped = "; ".join(e.heading().removeprefix("## ") for e in entries[:-1])
        extra_notes.append(f"kept only the last of {len(entries)} LOG entries (dropped: {dropped})")
    when = window.date(chosen.when)
    if when != chosen.when:
        extra_notes.append(f"restored the LOG entry's time to the clock's {when} (it said {chosen.when})")
    more = [f"runner: {n}" for n in extra_notes] + evidence
    outcome = chosen.outcome or log.Outcome.NO_BUILD
    body = _with_evidence(chosen, more)
    if outcome == log.Outcome.NO_BUILD and not (chosen.get("Result") or "").strip():
        body = [*body, *render_field("Result", f"no build (Rule 0): {why_no_log}")]
    body = _with_runner_fields(body, runner_fields)
    rebuilt = log.LogEntry(when, cycle, outcome, tuple(body))
    if len(entries) > 1 or closes or rebuilt.render() != chosen.render():
        text = old.text("log") or ""
        kept = text + (log.fence_closer(text) if verdict.open_ else "")   # the agent's entry, not more code
        files.write_bytes(memory.root, memory.config.path("log"), log.append_entry(kept, rebuilt).encode("utf-8"))
    task = one_line(chosen.get("Task") or NO_TASK)
    return Settled(cycle, task, outcome, extra_notes)


def _restore(memory: MemoryWriter, role: str, before: str) -> None:
    """Put back the file as the cycle found it. A file holding those bytes still (the agent left it alone) is
    not written: a 75 MB LOG rewritten would be hashed whole again by every status until the commit."""
    _restore_bytes(memory, role, encoded(before))


def _restore_bytes(memory: MemoryWriter, role: str, data: bytes) -> None:
    rel = memory.config.path(role)
    if files.read_bytes(memory.root, rel) != data:
        files.write_bytes(memory.root, rel, data)


RUNNER_FIELDS = (log.STARTED, log.SALVAGED, log.KEPT)
# Dropped from what a runner cycle's agent wrote: the runner's own fields, and the interactive-session marker
# (a runner cycle is not an interactive session, whatever its agent says).
_DROPPED = (*RUNNER_FIELDS, log.SESSION)


def _with_runner_fields(body: list[str], fields: dict[str, str]) -> list[str]:
    """`body` without any runner field (or session marker) the agent wrote, then the runner's own fields at the
    end."""
    kept = without_fields(strip_trailing_blank(body), _DROPPED)
    return [*kept, *(line for key, value in fields.items() for line in render_field(key, value))]


def _with_evidence(entry: log.LogEntry, extra: list[str]) -> list[str]:
    """The entry's body lines as the agent wrote them, with `extra` added to its Evidence (created if absent).

    Editing lines in place keeps anything the agent wrote outside the `- Key:` fields.
    """
    body = strip_trailing_blank(entry.body)
    if not extra:
        return body
    first = entry.line + 1                    # the absolute line of body[0]
    found = next((f for f in entry.fields if f.key == "Evidence"), None)
    if found is not None:
        at = found.end - first + 1
        added = [f"  {line}" for line in extra] if found.value else render_field("Evidence", "\n".join(extra))
        if not found.value:
            return [*body[:found.line - first], *added, *body[at:]]
        return [*body[:at], *added, *body[at:]]
    before = next((f for f in entry.fields if f.key in ("Result", "Learned")), None)
    at = before.line - first if before is not None else len(body)
    return [*body[:at], *render_field("Evidence", "\n".join(extra)), *body[at:]]


def _fresh_blocks(before: str, after: str) -> list[now.NowBlock]:
    """The blocks the cycle wrote on top of NOW, newest first. When NOW only grew on top (what the permissions
    leave), only the text above the old top block is parsed: NOW is 10 MB at 100x and its history is not read."""
    region = now.grown_on_top(before, after)
    if region is not None:
        kept = encoded(after)[len(region.encode("utf-8")):]           # the old blocks, unchanged
        lines, fresh = region.split("\n"), []
        for block in now.parse(region).blocks:
            heading = lines[block.line - 1].encode("utf-8")
            if kept.startswith(heading + b"\n") or b"\n" + heading + b"\n" in kept:
                break             # a copy of an old block is not the cycle's
            fresh.append(block)
        return fresh
    old_headings = {b.heading() for b in now.parse(before).blocks}
    fresh = []
    for block in now.parse(after).blocks:
        if block.heading() in old_headings:
            break
        fresh.append(block)
    return fresh


def _settle_now(memory: MemoryWriter, before: str, settled: Settled, window: Window) -> None:
    after = memory.read("now")
    fresh = _fresh_blocks(before, after)
    if not fresh:
        _restore(memory, "now", before)
        top = now.parse(before, max_blocks=1).top
        pending = decisions.parse(memory.read("decisions")).awaiting
        human = (f"{len(pending)} decision(s) wait in DECISIONS: {', '.join(d.id for d in pending)}"
                 if pending else "nothing")
        next_step = field_value(top.fields, "Next") if top is not None else None
        did = ("nothing built: the agent wrote no LOG entry, so the runner logged no-build (Rule 0)"
               if settled.wrote_log else f"{settled.task} ({settled.outcome})")
        memory.add_now_block(did=did, human=human, next=next_step or "pick the next task from ROADMAP",
                             cycle=settled.cycle)
        return
    chosen = fresh[0]
    when = window.date(chosen.when)
    if len(fresh) == 1 and chosen.cycle == settled.cycle and when == chosen.when:
        return
    if len(fresh) > 1:
        settled.notes.append(f"kept only the top of {len(fresh)} new NOW blocks")
    if when != chosen.when:
        settled.notes.append(f"restored the NOW block's time to the clock's {when} (it said {chosen.when})")
    lines = after.split("\n")
    first, last = fresh[0].line, fresh[-1].end
    rest = "\n".join([*lines[:first - 1], *lines[last:]]).replace("\n\n\n", "\n\n")
    block = now.NowBlock(when, cycle=settled.cycle, body=chosen.body)
    files.write_bytes(memory.root, memory.config.path("now"), now.prepend_block(rest, block).encode("utf-8"))
