"""Memory-aware three-way merges, for when a line merge conflicts but the memory changes do not.

The common races are not real conflicts: the agent asks a decision while the human answers another;
a cycle and the daily close both append to LOG; both put a new block on top of NOW. Each resolver takes
the base text, the upstream text (already pushed by someone else) and ours (the commit being replayed),
and returns the merged text, or None when the changes really collide (the caller then keeps the work on
a side branch). Pure text: no git here.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta
from typing import TYPE_CHECKING, Literal

from gitmem.checks.amendments import superseded_lines
from gitmem.config import Config
from gitmem.memory import decisions, lessons, log, now, volumes
from gitmem.memory.common_ends import common_prefix
from gitmem.memory.timestamps import Timestamp

if TYPE_CHECKING:     # the type only: merging is pure text, no git
    from gitmem.gitio import Resolver


def resolver_for(config: Config, *, merging: bool = False) -> Resolver:
    """A resolver for `gitmem.gitio.rebase_onto` and `merge_into`: merges the memory files it knows, declines
    everything else. `merging` (`gitmem merge`): the other side's LOG entries that would go back in time are
    dated again (see merge_log)."""

    def log_merge(base: str, upstream: str, ours: str) -> str | None:
        return merge_log(base, upstream, ours, merging=merging)

    merges = {config.path("decisions"): merge_decisions, config.path("log"): log_merge,
              config.path("now"): merge_now, config.path("lessons"): merge_lessons}

    def resolve(path: str, base: bytes | None, upstream: bytes | None, ours: bytes | None) -> bytes | None:
        merge = merges.get(path)
        if merge is None or base is None or upstream is None or ours is None:
            return None
        try:
            texts = [data.decode("utf-8") for data in (base, upstream, ours)]
        except UnicodeDecodeError:
            return None
        merged = merge(*texts)
        return merged.encode("utf-8") if merged is not None else None

    return resolve


def merge_log(base: str, upstream: str, ours: str, *, merging: bool = False) -> str | None:
    """Both sides appended: upstream's entries, then ours, if ours still come later in cycle number (LOG is
    ordered by position: a time earlier than upstream's is reported, GM310, not refused).

    Each side must be an append to the base as `check` judges it (gitmem.memory.log.judge_append): a line
    added to the base's last entry is a change to history, never merged away in silence.

    In a merge (`merging`: `gitmem merge`, the merge driver), ours are the other side's: their cycles take the
    numbers after upstream's last, one dated before upstream's last is dated again by brought_in, and each one
    changed keeps its own heading under `- Merged:`, which `verify` matches to the parent's entry
    (gitmem.checks.merges).

    Either way a close entry of ours never read the cycles upstream appended, which land above it: it names
    them (`_close_saw_not`), so the next close reports them.
    """
    old = base.encode("utf-8")
    added: list[tuple[log.LogEntry, ...]] = []
    for side in (upstream, ours):
        data = side.encode("utf-8")
        verdict = log.append_verdict(old, data)
        if not verdict.ok:
            return None
        added.append(log.appended_entries(data, verdict))
    theirs_added, ours_added = added
    if merging and theirs_added and ours_added:
        ours_added = brought_in(ours_added, upstream, max(theirs_added, key=lambda e: e.when.moment))
    ours_added = _close_saw_not(ours_added, theirs_added)
    if not log.ordered(theirs_added, ours_added):
        return None
    return _appended(upstream, ours_added, ours)


def _close_saw_not(ours: tuple[log.LogEntry, ...], theirs: tuple[log.LogEntry, ...]) -> tuple[log.LogEntry, ...]:
    """Ours replayed after theirs (a rebase, as a push makes): a close entry of ours never read the cycles theirs
    appended, which land above it, so it names them (`- Arrived:`) and the next close reports them; else the
    close would count them as reported by a report that does not hold them."""
    arrived = tuple(e.cycle for e in theirs if e.cycle is not None)
    if not arrived:
        return ours
    return tuple(log.with_arrived(e, arrived) if e.cycle is None else e for e in ours)


def _appended(text: str, entries: tuple[log.LogEntry, ...], written: str) -> str | None:
    """`entries` appended to LOG's `text`, each as `gitmem log add` appends one. `written`: the LOG they were
    written in, whose lines an amendment among them names (`_repointed`). None when an amendment among them
    names an entry `text` already has amended: both sides repaired one entry, and only one repair can stand
    (GM313), which is the human's to choose."""
    text = text if text.endswith("\n") else text + "\n"
    for entry in entries:
        entry = _repointed(entry, written, text)
        if entry.amends is not None and entry.amends in superseded_lines(text.encode("utf-8")):
            return None
        text = log.append_entry(text, entry)
    return text


def _repointed(entry: log.LogEntry, written: str, onto: str) -> log.LogEntry:
    """Amendment `entry`, written in LOG `written`, as it lands at the end of `onto`: naming the line where the
    entry it amends stands in `onto` (docs/format.md, "Amending LOG"). A merge or a rebase that moves the amended
    entry moves its amendment too, so the amendment goes on superseding it. The entry is found as it was written
    (`log.as_written`: renumbered or dated by a merge, it is still the same entry). An amendment that names no
    heading of `written`, or an entry `onto` does not hold, is left as it is: GM313 judges it where it lands."""
    line = entry.amends
    if line is None:
        return entry
    data = written.encode("utf-8")
    # Above where the two differ: an entry that ends before the last heading starting in their common part (the
    # entry at that heading may differ after it, though its heading reads the same as the other side's).
    cut = data.rfind(b"\n## ", 0, common_prefix(data, onto.encode("utf-8")))
    if line <= data.count(b"\n", 0, cut + 1):
        return entry
    above = log.tail_entries(log.TextSource(written), lambda found: bool(found) and found[0].line <= line).entries
    target = next((found for found in above if found.line == line), None)
    if target is None:
        return entry
    wanted = log.as_written(target)
    landed = log.tail_entries(log.TextSource(onto),
                              lambda found: any(log.as_written(e) == wanted for e in found)).entries
    moved = [found.line for found in landed if log.as_written(found) == wanted]
    if not moved or moved[-1] == line:
        return entry
    changed = entry if log.merged_from(entry) is not None else log.merged_entry(entry, entry.when, entry.cycle)
    return replace(changed, amends=moved[-1])


def pick_log(base: str, onto: str, picked: str) -> str | None:
    """What a rebase does to LOG, one replayed commit at a time: the entries `picked` appends to `base` (its
    parent), appended to `onto` (the tip rebuilt so far, which need not descend from `base`: it holds the
    commits replayed before, renumbered) by the rule of brought_in. Nothing of `onto` changes; `picked` must be
    an append to `base` as `check` judges it."""
    verdict = log.append_verdict(base.encode("utf-8"), picked.encode("utf-8"))
    if not verdict.ok or log.parse(onto).problems:
        return None
    added = log.appended_entries(picked.encode("utf-8"), verdict)
    last = log.tail(onto, 1).entries
    if not added:
        return onto
    if last:
        added = brought_in(added, onto, max(last, key=lambda e: e.when.moment))
        if not log.ordered(last, added):
            return None
    return _appended(onto, added, picked)


def pick_after_left_out(base: bytes, onto: bytes, picked: bytes) -> bytes | None:
    """What a rebase does to LOG for a commit replayed after a close it left out (gitmem.publish.closed_first): the
    entries `picked` appends to `base` (its parent, which holds the close entries left out) appended to `onto` (the
    tip, which does not), as merge_log appends ours: dated as written, if their cycles still come later. None when
    `picked` is no append to `base`, or appends a close entry: the closes after one left out are left out too, so
    this one is a human's, and a human decides."""
    try:
        texts = [data.decode("utf-8") for data in (base, onto, picked)]
    except UnicodeDecodeError:
        return None
    verdict = log.append_verdict(base, picked)
    if not verdict.ok or log.parse(texts[1]).problems:
        return None
    added = log.appended_entries(picked, verdict)
    if any(entry.cycle is None for entry in added):
        return None
    if not log.ordered(log.tail(texts[1], 1).entries, added):
        return None
    merged = _appended(texts[1], added, texts[2])
    return merged.encode("utf-8") if merged is not None else None


def brought_in(entries: tuple[log.LogEntry, ...], upstream: str, latest: log.LogEntry) -> tuple[log.LogEntry, ...]:
    """`entries` as a merge appends them after `upstream`, whose latest entry is `latest`: their cycles renumbered
    after upstream's last (gitmem.publish.renumber), each one dated before `latest` dated again, except up to
    their side's last close entry: that close reported them by their days (gitmem.close.day). One that changes
    keeps its own heading under `- Merged:`.

    The date made is never the merging machine's clock, which may run hours fast or slow: it is the latest time
    the two histories hold above the entry (`_earliest_in_order`), so the merge adds no time of its own that a
    right clock finds ahead (GM309: a time a parent carries is that parent's to answer for), and the entry keeps
    LOG's order (GM310) and falls after every close above it, so the next close reports it."""
    from gitmem.memory.positions import shift_after

    shift = shift_after(log.last_cycle_number(upstream), (e.cycle for e in entries if e.cycle is not None))
    closed = max((index for index, entry in enumerate(entries) if entry.cycle is None), default=-1)
    made = _earliest_in_order(latest.when, close=latest.cycle is None)
    changed = []
    for index, entry in enumerate(entries):
        cycle = shift.number(entry.cycle) if entry.cycle is not None else None
        when = made if entry.when.moment < made.moment and index > closed else entry.when
        changed.append(entry if (cycle, when) == (entry.cycle, entry.when) else log.merged_entry(entry, when, cycle))
        if when.moment >= made.moment:     # their side's own entries above the next ones: a close among them too
            made = _earliest_in_order(when, close=entry.cycle is None)
    return tuple(changed)


def _earliest_in_order(above: Timestamp, *, close: bool) -> Timestamp:
    """The earliest time an entry may carry below an entry dated `above` and stay in order: the same, or the
    minute after it below a close, which reports every cycle dated in its minute (gitmem.close.day.reported_until)."""
    return Timestamp(above.moment + timedelta(minutes=1), above.label) if close else above


def merge_now(base: str, upstream: str, ours: str) -> str | None:
    """New blocks from both sides go on top, newest first; an old block edited on both sides collides. A block one
    side dropped (rules 6: the runner keeps NOW's newest `volumes.NOW_BLOCKS_KEPT`) stays dropped; when a side
    dropped any, the merge keeps the newest NOW_BLOCKS_KEPT too, so two sides that each kept theirs do not add
    up to more (git keeps every block, and each cycle's LOG entry what its block said)."""
    old, theirs, mine = now.parse(base), now.parse(upstream), now.parse(ours)
    if old.problems or theirs.problems or mine.problems:
        return None
    known = {block.heading(): block for block in old.blocks}
    theirs_new = [b for b in theirs.blocks if b.heading() not in known]
    mine_new = [b for b in mine.blocks if b.heading() not in known]
    if {b.heading() for b in theirs_new} & {b.heading() for b in mine_new}:
        return None
    theirs_old = {b.heading(): b for b in theirs.blocks if b.heading() in known}
    mine_old = {b.heading(): b for b in mine.blocks if b.heading() in known}
    kept: list[now.NowBlock] = []
    for heading, block in known.items():
        picked = _pick(block, theirs_old.get(heading), mine_old.get(heading), lambda b: b.render())
        if picked is False:
            return None
        if picked is not None:
            kept.append(picked)
    preamble = _pick_value(old.preamble, theirs.preamble, mine.preamble)
    if preamble is None:
        return None
    fresh = [*mine_new, *theirs_new]      # ours follows upstream's, so it goes on top, whatever the times say
    merged = now.render(now.NowDoc(preamble, (*fresh, *kept)))
    if len(theirs_old) == len(mine_old) == len(known):
        return merged
    return volumes.keep_newest_blocks(merged.encode("utf-8"), max(volumes.NOW_BLOCKS_KEPT, len(fresh))).decode("utf-8")


def merge_decisions(base: str, upstream: str, ours: str) -> str | None:
    """Upstream's answers and our new questions both land; the same decision changed on both sides collides."""
    old, theirs, mine = decisions.parse(base), decisions.parse(upstream), decisions.parse(ours)
    if old.problems or theirs.problems or mine.problems:
        return None
    old_by_id = {d.id: d for d in old.all}
    theirs_by_id = {d.id: d for d in theirs.all}
    mine_by_id = {d.id: d for d in mine.all}
    if {i for i in theirs_by_id if i not in old_by_id} & {i for i in mine_by_id if i not in old_by_id}:
        return None     # both sides took the same new ID: a human must renumber one
    pending, resolved = list(theirs.pending), list(theirs.resolved)
    for item_id, base_item in old_by_id.items():
        them, me = theirs_by_id.get(item_id), mine_by_id.get(item_id)
        if me is not None and _same(me, base_item):
            continue        # untouched on our side: upstream's version stands
        if me is None or them is None or not _same(them, base_item):
            return None     # changed on both sides, or removed on one: a human decides
        if me.section == base_item.section:
            pending = [me if d.id == item_id else d for d in pending]
            resolved = [me if d.id == item_id else d for d in resolved]
        elif me.section == decisions.RESOLVED:      # answered on our side: on top of Resolved, as resolve() does
            pending = [d for d in pending if d.id != item_id]
            resolved = [me, *resolved]
        else:
            return None     # moved back to Pending: never merged (GM205)
    pending[:0] = [d for d in mine.pending if d.id not in old_by_id]      # asks go on top (rules 4)
    resolved += [d for d in mine.resolved if d.id not in old_by_id]
    preamble = _pick_value(old.preamble, theirs.preamble, mine.preamble)
    if preamble is None:
        return None
    doc = decisions.DecisionsDoc(preamble, tuple(pending), tuple(resolved), theirs.section_lines,
                                 (), theirs.section_preambles)
    return decisions.render(doc)


def merge_lessons(base: str, upstream: str, ours: str) -> str | None:
    """Union by lesson ID: each side's new lessons land (upstream's first), a lesson changed on one side takes
    that side's text; the same lesson changed on both sides, one removed, or one new ID with two texts
    collides."""
    old, theirs, mine = lessons.parse(base), lessons.parse(upstream), lessons.parse(ours)
    if old.problems or theirs.problems or mine.problems:
        return None
    old_by_id = {item.id: item.render() for item in old.lessons}
    mine_by_id = {item.id: item for item in mine.lessons}
    theirs_ids = {item.id for item in theirs.lessons}
    if set(old_by_id) - theirs_ids or set(old_by_id) - set(mine_by_id):
        return None         # removed on one side: LESSONS keeps every lesson (GM4xx), a human decides
    merged: list[lessons.Lesson] = []
    for item in theirs.lessons:
        mine_item = mine_by_id.get(item.id)
        if item.id in old_by_id:
            picked = _choose(old_by_id[item.id], item, mine_item)
            if picked is None:
                return None
            merged.append(picked)
        elif mine_item is not None and mine_item.render() != item.render():
            return None     # both sides took the same new ID
        else:
            merged.append(item)
    merged += [item for item in mine.lessons if item.id not in old_by_id and item.id not in theirs_ids]
    preamble = _pick_value(old.preamble, theirs.preamble, mine.preamble)
    if preamble is None:
        return None
    return lessons.render(lessons.LessonsDoc(preamble, tuple(merged)))


def _choose(base: str, theirs: lessons.Lesson, mine: lessons.Lesson | None) -> lessons.Lesson | None:
    if mine is None or mine.render() == base or mine.render() == theirs.render():
        return theirs
    return mine if theirs.render() == base else None


def _same(a: decisions.Decision, b: decisions.Decision) -> bool:
    return a.section == b.section and a.content() == b.content()


def _pick(base: now.NowBlock, theirs: now.NowBlock | None, mine: now.NowBlock | None,
          key: Callable[[now.NowBlock], str]) -> now.NowBlock | None | Literal[False]:
    """The side that changed, the base when neither did, None when both removed it, False on a collision."""
    if theirs is None and mine is None:
        return None
    if theirs is None or mine is None:
        changed = mine or theirs
        assert changed is not None          # one side kept it: both removing it was handled above
        return None if key(changed) == key(base) else False
    if key(mine) == key(base):
        return theirs
    if key(theirs) == key(base) or key(theirs) == key(mine):
        return mine
    return False


def _pick_value(base: tuple[str, ...], theirs: tuple[str, ...], mine: tuple[str, ...]) -> tuple[str, ...] | None:
    if mine == base or mine == theirs:
        return theirs
    if theirs == base:
        return mine
    return None
