"""History-backed confirmations: a `Confirmed` line counts only when the branch's history vouches for it.

A line `- Confirmed: <date> (cycle C) — evidence` under lesson L counts when the commit X that added it
  1. also added LOG's entry for cycle C: the confirmation was written in the cycle it cites; and
  2. found L already there (L is in a parent of X), or also added the LOG entry of L's own cycle: a squash-merged
     pull request brings a lesson, its cycle and the later cycles that confirm it in one commit.
So a backdated line citing old cycles never counts, nor a line written outside any cycle, nor a confirmation made
in the same cycle as its lesson. This holds alike for the runner's commits, for interactive sessions that commit
as the human, and after a squash merge. What does not count is reported by the close; the close confirms nothing.

Cost: one walk back over the commits that changed LESSONS (blob ids only), stopping once every line asked about
is found. The LOG side reads no old blob: LOG is append-only, so a commit's LOG is the current LOG cut at its
size, which one hash proves, and "added cycle C" means C's heading lies between the parents' sizes and its own.
Verdicts are cached in the state directory by the commit that added the line, valid while it is in history.
"""
from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from gitmem import gitio
from gitmem.close.day import cycle_numbers
from gitmem.memory import fences, lessons, log
from gitmem.memory.lessons import Lesson
from gitmem.memory.text import Field, decode
from gitmem.workspace import Workspace

CACHE_NAME = "confirmations.json"


@dataclass(frozen=True)
class Verdict:
    ok: bool
    why: str = ""               # why the line does not count; "" when it does
    commit: str | None = None   # the commit that added the line


NOT_COMMITTED = Verdict(False, "it is not committed yet")
Backs = Callable[[Lesson, Field], Verdict]


class Backing:
    """Answers "does history back this Confirmed line?" for the lessons of one workspace."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.repo = ws.repo
        self.lessons_path = ws.config.path("lessons")
        self.log_path = ws.config.path("log")
        self._log: bytes | None = None
        self._verdicts: dict[str, Verdict] = {}
        self._prefix: dict[str, bool] = {}
        self._cycles: dict[str, set[int]] = {}
        self._offsets: dict[int, int | None] = {}
        self._fences: fences.Fenced | None = None
        self._docs: dict[str, lessons.LessonsDoc] = {}

    # -- the question ----------------------------------------------------------------------------------------
    def __call__(self, lesson: Lesson, item: Field) -> Verdict:
        key = _key(lesson.id, item.value)
        if key not in self._verdicts:
            self.resolve([(lesson, item)])
        return self._verdicts[key]

    def resolve(self, wanted: Iterable[tuple[Lesson, Field]]) -> None:
        """Find verdicts for many lines in one walk (the close asks about every candidate at once)."""
        pending = {_key(lesson.id, item.value): (lesson, item) for lesson, item in wanted
                   if _key(lesson.id, item.value) not in self._verdicts}
        if not pending:
            return
        head = gitio.head_id(self.repo)
        cache = self._load_cache()
        for key in list(pending):
            found = cache.get(key)
            if head is not None and isinstance(found, dict) and isinstance(found.get("commit"), str) \
                    and gitio.is_ancestor_id(self.repo, found["commit"], head):
                self._verdicts[key] = Verdict(bool(found.get("ok")), str(found.get("why", "")), found["commit"])
                del pending[key]
        if pending and head is not None:
            self._walk(pending)
        for key in pending:
            self._verdicts.setdefault(key, NOT_COMMITTED)
        self._save_cache(cache)

    # -- walking history -------------------------------------------------------------------------------------
    def _walk(self, pending: dict[str, tuple[Lesson, Field]]) -> None:
        for change in gitio.changes(self.repo, self.lessons_path):
            if change.blob is None:
                continue
            mine = self._doc(change.blob)
            parents = [self._doc(blob) for blob in change.parents if blob is not None]
            for key, (lesson, item) in list(pending.items()):
                if not _has_line(mine, lesson.id, item.value) or any(_has_line(p, lesson.id, item.value)
                                                                     for p in parents):
                    continue
                self._verdicts[key] = self._judge(change, lesson, item, existed=any(p.find(lesson.id)
                                                                                    for p in parents))
                del pending[key]
            if not pending:
                return

    def _judge(self, change: gitio.Change, lesson: Lesson, item: Field, *, existed: bool) -> Verdict:
        commit = change.commit
        event = lessons.parse_event(item)
        if event is None:
            return Verdict(False, "it names no cycle", commit.id)
        if not self._added_cycle(commit, event.cycle):
            return Verdict(False, f"the commit that added it ({commit.short}) did not log cycle {event.cycle}",
                           commit.id)
        happened = lesson.happened
        if not existed and (happened is None or not self._added_cycle(commit, happened.cycle)):
            return Verdict(False, f"{lesson.id} itself was added in the same commit ({commit.short}), not in an "
                                  "earlier cycle", commit.id)
        return Verdict(True, "", commit.id)

    def _added_cycle(self, commit: gitio.Commit, cycle: int) -> bool:
        """Whether `commit` added LOG's entry for `cycle` (present in it, absent from every parent)."""
        return self._has_cycle(commit.id, cycle) and not any(self._has_cycle(p, cycle) for p in commit.parents)

    def _has_cycle(self, commit_id: str, cycle: int) -> bool:
        """Whether a commit's LOG holds `cycle`: cut from the current LOG when that commit's LOG is its prefix."""
        blob = gitio.file_id_at(self.repo, commit_id, self.log_path)
        if blob is None:
            return False
        size = gitio.blob_size(self.repo, blob) or 0
        if self._is_prefix(blob, size):
            offset = self._heading_offset(cycle)
            return offset is not None and offset < size
        if blob not in self._cycles:        # a merge reordered LOG, or history was rewritten: read that LOG
            self._cycles[blob] = cycle_numbers(decode(gitio.blob(self.repo, blob)).text)
        return cycle in self._cycles[blob]

    def _is_prefix(self, blob: str, size: int) -> bool:
        if blob not in self._prefix:
            current = self._current_log()
            self._prefix[blob] = size <= len(current) and gitio.blob_id(memoryview(current)[:size]) == blob
        return self._prefix[blob]

    def _heading_offset(self, cycle: int) -> int | None:
        """Where the current LOG's heading of `cycle` starts, searching back from the end: recent cycles are
        found at once, whatever the length of LOG."""
        if cycle in self._offsets:
            return self._offsets[cycle]
        data, needle = self._current_log(), b"cycle %d" % cycle
        found, end = None, len(data)
        while found is None:
            at = data.rfind(needle, 0, end)
            if at < 0:
                break
            start = data.rfind(b"\n", 0, at) + 1
            stop = data.find(b"\n", at)
            line = data[start:stop if stop >= 0 else len(data)]
            parsed = log.parse_heading(line[3:].decode("utf-8", "replace")) if line.startswith(b"## ") else None
            if parsed is not None and parsed[1] == cycle and not self._fenced().inside(start):
                found = start
            end = at
        self._offsets[cycle] = found
        return found

    def _fenced(self) -> fences.Fenced:
        """Where the current LOG's fenced code is: a fenced copy of a heading is no entry."""
        if self._fences is None:
            self._fences = fences.Fenced(self._current_log())
        return self._fences

    def _current_log(self) -> bytes:
        if self._log is None:
            try:
                self._log = self.ws.path("log").read_bytes()
            except OSError:
                self._log = b""
        return self._log

    def _doc(self, blob: str) -> lessons.LessonsDoc:
        if blob not in self._docs:
            self._docs[blob] = lessons.parse(decode(gitio.blob(self.repo, blob)).text)
        return self._docs[blob]

    # -- the cache -------------------------------------------------------------------------------------------
    def _cache_path(self) -> Path | None:
        state = self.ws.state_dir
        return state / CACHE_NAME if state is not None else None

    def _load_cache(self) -> dict[str, object]:
        path = self._cache_path()
        try:
            data = json.loads(path.read_text(encoding="utf-8")) if path is not None else {}
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def _save_cache(self, cache: dict[str, object]) -> None:
        path = self._cache_path()
        fresh = {key: {"commit": v.commit, "ok": v.ok, "why": v.why}
                 for key, v in self._verdicts.items() if v.commit is not None}
        if path is None or all(cache.get(key) == value for key, value in fresh.items()):
            return
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps({**cache, **fresh}), encoding="utf-8")
            os.replace(tmp, path)
        except OSError:
            pass        # a read-only .git only costs a walk next time


def _key(lesson_id: str, value: str) -> str:
    return hashlib.sha1(f"{lesson_id}\n{value}".encode()).hexdigest()


def _has_line(doc: lessons.LessonsDoc, lesson_id: str, value: str) -> bool:
    found = doc.find(lesson_id)
    return found is not None and any(item.value == value for item, _ in found.confirmations)


def uncommitted(log_text: str) -> Backs:
    """For memory outside git (tests of pure logic): a line counts when its cycle has a LOG entry now."""
    logged = cycle_numbers(log_text)

    def backs(lesson: Lesson, item: Field) -> Verdict:
        event = lessons.parse_event(item)
        ok = event is not None and event.cycle in logged
        return Verdict(ok, "" if ok else "its cycle has no LOG entry")
    return backs


def backing_for(ws: Workspace, log_text: str) -> Backs:
    """History's verdicts for a git work tree; for plain files outside git, whether the cycle has a LOG entry."""
    return Backing(ws) if ws.state_dir is not None else uncommitted(log_text)
