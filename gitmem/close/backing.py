"""History-backed confirmations: a `Confirmed` line counts only when the branch's history vouches for it.

A line `- Confirmed: <date> (cycle C) — evidence` under lesson L counts when the commit X that added it
  1. also added LOG's entry for cycle C: the confirmation was written in the cycle it cites; and
  2. found L already there (L is in a parent of X), or also added the LOG entry of L's own cycle: a squash-merged
     pull request brings a lesson, its cycle and the later cycles that confirm it in one commit (where the
     gates count one confirmation per commit: gitmem.close.gates).
So a backdated line citing old cycles never counts, nor a line written outside any cycle, nor a confirmation made
in the same cycle as its lesson. This holds alike for the runner's commits, for interactive sessions that commit
as the human, and after a squash merge. What does not count is reported by the close; the close confirms nothing.

Cost: one walk back over the commits that changed LESSONS (blob ids only), stopping once every line asked about
is found; the blobs of those changes are searched as bytes, never parsed. The LOG side reads no old blob: LOG is
append-only (GM301), so a commit's LOG is the current LOG cut at its size, and "added cycle C" means C's heading
lies between the parents' sizes and its own.
The state directory caches, for each line, the commit that added it: that saves the walk, never the judgement.
The cache is in `.git/`, which the agent can write, so nothing in it counts as it stands: a cached commit is
used only when it is in history and its LESSONS, against its parents', shows it added the line; the verdict is
then judged again from that commit, as the walk would. A planted or edited entry fails that check, and the line
is looked for in history as if there were no cache.
The judgement itself is saved only where its inputs are unchanged and its record is out of the agent's reach
(gitmem.close.verdict_memo): a close judges the lines of the lessons that changed since, not all of them.
"""
from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from gitmem import gitio
from gitmem.close.day import cycle_numbers
from gitmem.close.verdict_memo import KeptGate, VerdictMemo, content_digest, is_commit_id
from gitmem.confined import files
from gitmem.memory import fences, lessons, log, volumes
from gitmem.memory.decoding import decode_text
from gitmem.memory.fields import Field, render_field
from gitmem.memory.lessons import Lesson
from gitmem.workspace import Workspace
from gitmem.workspace.statedir import CONFIRMATIONS_CACHE, read_cache, write_cache


@dataclass(frozen=True)
class Verdict:
    ok: bool
    why: str = ""               # why the line does not count; "" when it does
    commit: str | None = None   # the commit that added the line


NOT_COMMITTED = Verdict(False, "it is not committed yet")
# What the close makes a rule from: the lesson's Rule line, or a model's wording of its title, Why and Change; and
# the rules its Supersedes retires. A confirmation confirmed the lesson as it read when the line was added; edited
# since (an agent writing a rule of its own over two confirmations of another), it is not what was confirmed, and
# the line does not count.
PROMOTED_FIELDS = ("Why", "Change", "Rule", "Supersedes")
Backs = Callable[[Lesson, Field], Verdict]


class Backing:
    """Answers "does history back this Confirmed line?" for the lessons of one workspace."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.repo = ws.repo
        self.lessons_path = ws.config.path("lessons")
        self.log_path = ws.config.path("log")
        self._log: bytes | None = None
        self._live: _LogText | None = None
        self._unsealed: _LogText | None = None
        self._verdicts: dict[str, Verdict] = {}
        # The verdicts of the lines `resolve` was asked about, by (lesson id, line): the gates then ask about each
        # line again (4,400 at 100x), found without its digest (`_key`) computed a second time.
        self._answers: dict[tuple[str, str], Verdict] = {}
        self._keys: dict[tuple[str, str], str] = {}     # and their keys (`_key`), for the gates kept
        self._cycles: dict[str, set[int]] = {}
        self._starts_live: dict[str, bool] = {}     # LOG.md blobs of sealed commits: whether the current starts so
        self._docs: dict[str, lessons.LessonsDoc] = {}
        self._raw: dict[str, _LessonsBytes] = {}
        # What history says of a commit, asked once per commit: the lines a commit added, and the parents of
        # consecutive commits, share it (a close asks about thousands of lines at 100x).
        self._commits: dict[str, gitio.Commit | None] = {}
        self._file_ids: dict[tuple[str, str], str | None] = {}
        self._sizes: dict[str, int] = {}
        self._memo = VerdictMemo(ws.root, (self.lessons_path, self.log_path))
        self._cache_read: dict[str, object] | None = None      # the cache as `kept_gate` found it

    # -- the gates' outcome, kept --------------------------------------------------------------------------------
    def kept_gates(self, asked: list[Lesson], needed: int) -> dict[int, KeptGate]:
        """The gates' outcomes an earlier process kept (gitmem.close.verdict_memo) for the lessons `asked`, by
        `id(lesson)`: those of lessons whose every verdict would be taken from the memo now (the rest are judged)."""
        head = gitio.head_id(self.repo)
        if head is None:
            return {}
        cache = self._load_cache()[1]
        found: dict[int, KeptGate] = {}
        for lesson in asked:
            # The cache names a line's commit as its value (`_save_cache`); an entry of another form misses here,
            # and its lesson is judged (where the cache's reading of it is checked, `_cached_commit`).
            gate = self._memo.find_gate(content_digest(lesson.content()), needed, cache.get,
                                        in_history=lambda valid_at: gitio.is_ancestor_id(self.repo, valid_at, head),
                                        log=self._current_log)
            if gate is not None:
                found[id(lesson)] = gate
        return found

    def keep_gate(self, lesson: Lesson, needed: int, gate: KeptGate) -> None:
        """Keep the gates' outcome this process judged for `lesson`, when every line of it has a verdict judged from
        a commit (a line not committed yet is judged again next time, and so is its lesson)."""
        lines = []
        for item, _ in lesson.confirmations:
            verdict = self._answers.get((lesson.id, item.value))
            if verdict is None or verdict.commit is None:
                return
            lines.append((self._keys[lesson.id, item.value], verdict.commit))
        self._memo.keep_gate(content_digest(lesson.content()), needed, lines, gate)

    def save_gates(self) -> None:
        """Write the gates kept by `keep_gate` (with the verdicts they stand on)."""
        head = gitio.head_id(self.repo)
        if head is not None:
            self._memo.save(head, in_history=lambda valid_at: gitio.is_ancestor_id(self.repo, valid_at, head),
                            log=self._current_log)

    # -- the question ----------------------------------------------------------------------------------------
    def __call__(self, lesson: Lesson, item: Field) -> Verdict:
        found = self._answers.get((lesson.id, item.value))
        if found is not None:
            return found
        key = _key(lesson.id, item.value)
        if key not in self._verdicts:
            self.resolve([(lesson, item)])
        return self._verdicts[key]

    def resolve(self, wanted: Iterable[tuple[Lesson, Field]]) -> None:
        """Find verdicts for many lines in one walk (the close asks about every candidate at once)."""
        asked = {_key(lesson.id, item.value): (lesson, item) for lesson, item in wanted}
        pending = {key: line for key, line in asked.items() if key not in self._verdicts}
        if pending:
            self._resolve(pending)
        for key, (lesson, item) in asked.items():
            self._answers[lesson.id, item.value] = self._verdicts[key]
            self._keys[lesson.id, item.value] = key

    def _resolve(self, pending: dict[str, tuple[Lesson, Field]]) -> None:
        head = gitio.head_id(self.repo)
        valid_at, cache = self._load_cache()
        # A cached verdict holds while the commit that added its line is in history. When the HEAD the cache
        # was written at is an ancestor of this HEAD, all of them are: one check instead of one per commit.
        all_in_history = head is not None and valid_at is not None and gitio.is_ancestor_id(self.repo, valid_at,
                                                                                             head)
        digests: dict[int, str] = {}
        if head is not None:
            self._remembered(pending, cache, head, digests)
        judging = dict(pending)
        if head is not None:
            self._recheck_cached(pending, cache, head, all_in_history=all_in_history)
        if pending and head is not None:
            self._walk(pending)
        for key in pending:
            self._verdicts.setdefault(key, NOT_COMMITTED)
        if head is not None:
            self._save_cache(head, valid_at, cache if all_in_history else {})
            self._remember(judging, head, digests)

    def _remembered(self, pending: dict[str, tuple[Lesson, Field]], cache: dict[str, object], head: str,
                    digests: dict[int, str]) -> None:
        """The verdicts judged before whose inputs are unchanged (gitmem.close.verdict_memo) leave `pending`."""
        for key, (lesson, _) in list(pending.items()):
            commit = _cached_commit(cache.get(key))
            if commit is None:
                continue
            kept = self._memo.find(key, _digest_of(lesson, digests), commit,
                                   in_history=lambda valid_at: gitio.is_ancestor_id(self.repo, valid_at, head),
                                   log=self._current_log)
            if kept is not None:
                self._verdicts[key] = Verdict(kept[2], kept[3], kept[0])
                del pending[key]

    def _remember(self, judged: dict[str, tuple[Lesson, Field]], head: str, digests: dict[int, str]) -> None:
        """Keep the verdicts this process judged from history for the next (those of lines not committed yet
        name no commit, and are judged again)."""
        for key, (lesson, _) in judged.items():
            verdict = self._verdicts[key]
            if verdict.commit is not None:
                self._memo.keep(key, _digest_of(lesson, digests), verdict.commit, verdict.ok, verdict.why)
        self._memo.save(head, in_history=lambda valid_at: gitio.is_ancestor_id(self.repo, valid_at, head),
                        log=self._current_log)

    def _recheck_cached(self, pending: dict[str, tuple[Lesson, Field]], cache: dict[str, object], head: str, *,
                        all_in_history: bool) -> None:
        """Judge again, from the commit the cache names, each pending line whose commit is in history; what
        stands leaves `pending` with its verdict."""
        in_history: dict[str, bool] = {}
        cached = [(key, commit) for key in pending if (commit := _cached_commit(cache.get(key))) is not None]
        # The lines of one commit together, and the commits oldest first. A commit's parent holds the LESSONS of
        # the commit before it that changed the file, so in this order each LESSONS blob is read once, where
        # the lessons' order would read a commit's blob and its parent's again and again: a real history has a
        # commit for each confirmation (a cycle each; 3,000 at 100x) and a 1.4 MB LESSONS blob takes libgit2
        # about 25 ms to read.
        cached.sort(key=lambda pair: self._made_at(pair[1]))
        for key, commit in cached:
            if not all_in_history and commit not in in_history:
                in_history[commit] = gitio.is_ancestor_id(self.repo, commit, head)
            if all_in_history or in_history[commit]:
                verdict = self._recheck(commit, *pending[key])
                if verdict is not None:
                    self._verdicts[key] = verdict
                    del pending[key]

    # -- walking history -------------------------------------------------------------------------------------
    def _walk(self, pending: dict[str, tuple[Lesson, Field]]) -> None:
        """Newest change of LESSONS first: the commit that added a line has it, and no parent of it does.

        Blobs are searched as bytes for the line as gitmem renders it, inside its lesson's section: at 100x a
        LESSONS blob holds 3,000 lessons, and parsing one per change would cost seconds. A line written in
        another form (by hand) is looked for in parsed blobs instead."""
        current = _LessonsBytes(files.read_bytes(self.ws.root, self.lessons_path) or b"")
        needles = {key: _rendered(item) for key, (lesson, item) in pending.items()}
        parsed = {key for key, (lesson, _) in pending.items() if not current.has(lesson.id, needles[key])}
        for change in gitio.changes(self.repo, self.lessons_path):
            if change.blob is None:
                continue
            for key, (lesson, item) in list(pending.items()):
                existed = self._added(change.blob, change.parents, lesson, item, parsed=key in parsed,
                                      needle=needles[key])
                if existed is not None:
                    self._verdicts[key] = self._judge(change.commit, lesson, item, existed=existed, blob=change.blob)
                    del pending[key]
            if not pending:
                return

    def _added(self, blob: str, parent_blobs: Iterable[str | None], lesson: Lesson, item: Field, *, parsed: bool,
               needle: bytes, in_blob: bool | None = None) -> bool | None:
        """None when the LESSONS `blob` did not add the line to the parents' versions; else whether the lesson
        was already there in a parent. `parsed`: the line is not in gitmem's rendering, so blobs are parsed.
        `in_blob`: whether `blob` holds `needle`, when the caller has looked already."""
        parents = [blob for blob in parent_blobs if blob is not None]
        if parsed:
            found = [_has_line(self._doc(each), lesson.id, item.value) for each in (blob, *parents)]
            added = found[0] and not any(found[1:])
        else:
            found_here = self._bytes(blob).has(lesson.id, needle) if in_blob is None else in_blob
            added = found_here and not any(self._bytes(p).has(lesson.id, needle) for p in parents)
        return any(self._bytes(p).span(lesson.id) is not None for p in parents) if added else None

    def _recheck(self, commit_id: str, lesson: Lesson, item: Field) -> Verdict | None:
        """The verdict for a line the cache says `commit_id` added, judged from history; None when that commit
        did not add it (a planted or stale entry: the caller walks history instead)."""
        commit = self._commit(commit_id)
        if commit is None:
            return None
        blob = self._file_id(commit.id, self.lessons_path)
        if blob is None:
            return None
        parents = [self._file_id(parent, self.lessons_path) for parent in commit.parents]
        needle = _rendered(item)
        in_blob = self._bytes(blob).has(lesson.id, needle)
        existed = self._added(blob, parents, lesson, item, parsed=not in_blob, needle=needle, in_blob=in_blob)
        return self._judge(commit, lesson, item, existed=existed, blob=blob) if existed is not None else None

    def _judge(self, commit: gitio.Commit, lesson: Lesson, item: Field, *, existed: bool, blob: str) -> Verdict:
        # The lesson's own reading of its Confirmed lines, when `item` is one of them (read once per lesson).
        for line, found in lesson.confirmations:
            if line is item:
                event = found
                break
        else:
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
        changed = self._changed_since(blob, lesson)
        if changed:
            return Verdict(False, f"{lesson.id}'s {' and '.join(changed)} changed after it (it confirmed the lesson as "
                                  f"it read in {commit.short})", commit.id)
        return Verdict(True, "", commit.id)

    def _changed_since(self, blob: str, lesson: Lesson) -> list[str]:
        """What of the lesson's title and PROMOTED_FIELDS reads otherwise than in the LESSONS `blob`. Searched as
        bytes when gitmem wrote them (a close judges thousands of lines at 100x); else that lesson's section alone
        is parsed."""
        data = self._bytes(blob)
        span = data.span(lesson.id)
        section = data.data[span[0]:span[1]] if span is not None else b""
        if not section:
            return []
        fields = {key: [item for item in lesson.fields if item.key == key] for key in PROMOTED_FIELDS}
        if section.startswith(lesson.heading().encode("utf-8") + b"\n") and all(
                section.count(f"\n- {key}:".encode()) == len(now) and all(_rendered(item) in section for item in now)
                for key, now in fields.items()):
            return []
        found = lessons.parse(decode_text(section)).find(lesson.id)
        if found is None:
            return []
        changed = ["title"] if " ".join(found.title.split()) != " ".join(lesson.title.split()) else []
        return changed + [key for key, now in fields.items() if _values(now, key) != _values(found.fields, key)]

    def _added_cycle(self, commit: gitio.Commit, cycle: int) -> bool:
        """Whether `commit` added LOG's entry for `cycle` (present in it, absent from every parent)."""
        return self._has_cycle(commit.id, cycle) and not any(self._has_cycle(p, cycle) for p in commit.parents)

    def _has_cycle(self, commit_id: str, cycle: int) -> bool:
        """Whether a commit's LOG.md holds `cycle`: cut from the current LOG when that commit's LOG is its prefix.

        Rules 6 seal LOG's oldest entries into volumes (gitmem.memory.volumes), so LOG.md stops holding every older
        LOG.md. A commit from before the first seal (its tree holds no volume) has a LOG that starts the unsealed
        history (the volumes, then LOG.md, as `volumes.unseal` joins them), which is then its LOG to cut; a commit
        after it holds a LOG.md of a few hundred entries, read whole. An entry sealed away at a commit is not in
        its LOG.md, as it is no longer anything that commit added."""
        blob = self._file_id(commit_id, self.log_path)
        if blob is None:
            return False
        if blob not in self._sizes:
            self._sizes[blob] = gitio.blob_size(self.repo, blob) or 0
        size = self._sizes[blob]
        if self._file_id(commit_id, volumes.volume_path(self.log_path, 1)) is not None:
            # Sealed: a LOG.md of a few hundred entries, which starts the current one only since the last seal.
            # Compared whole (a memcmp): the cut by size alone could meet an entry's end by chance.
            text = self._live_text()
            if blob not in self._starts_live:
                self._starts_live[blob] = text.data.startswith(gitio.blob(self.repo, blob))
            starts = self._starts_live[blob]
        else:
            text = self._unsealed_text() if self._has_volumes() else self._live_text()
            starts = text.is_prefix(blob, size)
        if starts:
            offset = text.heading_offset(cycle)
            return offset is not None and offset < size
        if blob not in self._cycles:        # a merge reordered LOG, a seal moved it, or history was rewritten
            self._cycles[blob] = cycle_numbers(decode_text(gitio.blob(self.repo, blob)))
        return cycle in self._cycles[blob]

    def _commit(self, commit_id: str) -> gitio.Commit | None:
        if commit_id not in self._commits:
            try:
                self._commits[commit_id] = gitio.commit(self.repo, commit_id)
            except gitio.RepoError:
                self._commits[commit_id] = None
        return self._commits[commit_id]

    def _made_at(self, commit_id: str) -> tuple[int, str]:
        """Where a commit sorts in time: its committer time, then its id (those of one second together)."""
        commit = self._commit(commit_id)
        return (commit.time if commit is not None else 0), commit_id

    def _file_id(self, commit_id: str, path: str) -> str | None:
        if (commit_id, path) not in self._file_ids:
            self._file_ids[commit_id, path] = gitio.file_id_at(self.repo, commit_id, path)
        return self._file_ids[commit_id, path]

    def _current_log(self) -> bytes:
        if self._log is None:
            self._log = files.read_bytes(self.ws.root, self.ws.config.path("log")) or b""
        return self._log

    def _live_text(self) -> _LogText:
        if self._live is None:
            self._live = _LogText(self._current_log())
        return self._live

    def _has_volumes(self) -> bool:
        head = gitio.head_id(self.repo)
        return head is not None and self._file_id(head, volumes.volume_path(self.log_path, 1)) is not None

    def _unsealed_text(self) -> _LogText:
        """LOG as it would read unsealed: HEAD's volumes, then LOG.md (read only when a commit from before the
        first seal is asked about: once, when a seal made the kept verdicts stale)."""
        if self._unsealed is None:
            from gitmem.workspace import log_history

            found = log_history.tracked(self.repo, self.log_path)
            joined = volumes.unseal(self._current_log(), self.log_path,
                                    [(volume.number, gitio.blob(self.repo, volume.blob)) for volume in found])
            self._unsealed = _LogText(joined if joined is not None else self._current_log())
        return self._unsealed

    def _bytes(self, blob: str) -> _LessonsBytes:
        if blob not in self._raw:
            if len(self._raw) > 64:          # a walk moves on; keep memory flat (the oldest read goes first)
                del self._raw[next(iter(self._raw))]
            self._raw[blob] = _LessonsBytes(gitio.blob(self.repo, blob))
        return self._raw[blob]

    def _doc(self, blob: str) -> lessons.LessonsDoc:
        if blob not in self._docs:
            self._docs[blob] = lessons.parse(decode_text(gitio.blob(self.repo, blob)))
        return self._docs[blob]

    # -- the cache -------------------------------------------------------------------------------------------
    def _cache_path(self) -> Path | None:
        state = self.ws.state_dir
        return state / CONFIRMATIONS_CACHE if state is not None else None

    def _load_cache(self) -> tuple[str | None, dict[str, object]]:
        """(the HEAD the cache was written at, its verdicts by line key)."""
        data = read_cache(self._cache_path())
        if not isinstance(data.get("verdicts"), dict):
            return None, {}
        valid_at = data.get("valid_at")
        return (valid_at if isinstance(valid_at, str) else None), data["verdicts"]

    def _save_cache(self, head: str, valid_at: str | None, kept: dict[str, object]) -> None:
        """Write where each line was added, as known at `head`: this run's, and the cache's when all of it still
        holds. Only the commit is kept, as the line's value (a JSON node a line, where an object of it was two
        to load and walk: 4,400 lines at 100x): a verdict is judged again each time (see the module's docstring)."""
        path = self._cache_path()
        fresh = {key: v.commit for key, v in self._verdicts.items() if v.commit is not None}
        if path is None or (valid_at == head and all(kept.get(key) == value for key, value in fresh.items())):
            return
        write_cache(path, {"valid_at": head, "verdicts": {**kept, **fresh}})


class _LogText:
    """A LOG's bytes, with which older LOG blobs are its start and where each cycle's heading stands in it."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self._prefix: dict[str, bool] = {}
        self._offsets: dict[int, int | None] = {}
        self._index: dict[int, list[int]] | None = None

    def is_prefix(self, blob: str, size: int) -> bool:
        """Whether an older LOG is the current LOG cut at its size. LOG is append-only on every commit (GM301,
        held by check, verify and the runner), so an older LOG that ends where an entry of the current LOG
        ends is taken as its prefix: hashing 75 MB per commit would make the first walk at 100x take minutes.
        Only a LOG as long as the current one is hashed. Anything else (a merge that interleaved entries) is
        read and parsed by the caller."""
        if blob not in self._prefix:
            current = self.data
            if size >= len(current):
                self._prefix[blob] = size == len(current) and gitio.blob_id(current) == blob
            else:
                self._prefix[blob] = size > 0 and current[size - 1:size] == b"\n" and \
                    current[size:size + 4] == b"\n## "
        return self._prefix[blob]

    def heading_offset(self, cycle: int) -> int | None:
        """Where the current LOG's heading of `cycle` starts: the first `## ` line outside code fences (a
        fenced example of a heading is no heading, wherever it stands) that parses as that cycle's heading.
        The lines that name a cycle outside fences are indexed in one regex pass that finds the fence lines
        too; only those of the cycles asked about are parsed (a close asks about a few thousand of a 100x LOG's
        54,000 headings)."""
        data = self.data
        if self._index is None:
            candidates: dict[int, list[int]] = {}
            fenced = False
            # The matches come in the text's order, so the fence state is counted as they come, as
            # `fences.Fenced` counts it: every fence line opens or closes one.
            for at, named in _lines_found(_FENCE_OR_NAMES_A_CYCLE, data):
                if named is None:
                    fenced = not fenced
                elif not fenced:
                    number = int(named)
                    if number in candidates:
                        candidates[number].append(at)
                    else:
                        candidates[number] = [at]
            self._index = candidates
        if cycle not in self._offsets:
            self._offsets[cycle] = next((at for at in self._index.get(cycle, ()) if _cycle_of(data, at) == cycle),
                                        None)
        return self._offsets[cycle]


def _cached_commit(found: object) -> str | None:
    """The commit the cache names for a line: its value (`_save_cache`), or the `commit` of an object, as
    caches before it were written; None for anything else."""
    commit = found.get("commit") if isinstance(found, dict) else found
    return commit if is_commit_id(commit) else None  # type: ignore[return-value]


def _digest_of(lesson: Lesson, digests: dict[int, str]) -> str:
    """The lesson's content digest, computed once per lesson object in one `resolve` (`digests`)."""
    found = digests.get(id(lesson))
    if found is None:
        found = digests[id(lesson)] = content_digest(lesson.content())
    return found


def _key(lesson_id: str, value: str) -> str:
    return hashlib.sha1(f"{lesson_id}\n{value}".encode()).hexdigest()


class _LessonsBytes:
    """A LESSONS file as bytes, searched without parsing: a lesson's section, and a line inside it."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self._spans: dict[str, tuple[int, int]] | None = None
        self._fenced: bool | None = None
        self._searched = 0

    def span(self, lesson_id: str) -> tuple[int, int] | None:
        """Where the lesson's section starts and ends (its first heading, outside code fences)."""
        if self._spans is None and self._searched < _SEARCHES_BEFORE_INDEX and _plain_name(lesson_id) \
                and not self._has_fences():
            self._searched += 1
            return self._first_section(lesson_id.encode("ascii"))
        if self._spans is None:
            self._spans = {}
            # The headings and the fence lines in one pass, in the text's order (as `_LogText.heading_offset` finds
            # LOG's).
            fenced = False
            starts: list[tuple[int, bytes]] = []
            for at, name in _lines_found(_FENCE_OR_SECTION, self.data):
                if name is None:
                    fenced = not fenced
                elif not fenced:
                    starts.append((at, name))
            ends = [start for start, _ in starts[1:]] + [len(self.data)] * bool(starts)
            for (start, name), end in zip(starts, ends, strict=True):
                self._spans.setdefault(name.decode("ascii", "replace"), (start, end))
        return self._spans.get(lesson_id)

    def _has_fences(self) -> bool:
        if self._fenced is None:
            self._fenced = _FENCE_LINE.first.match(self.data) is not None or \
                _FENCE_LINE.after_newline.search(self.data) is not None
        return self._fenced

    def _first_section(self, name: bytes) -> tuple[int, int] | None:
        """`span` in a text without fence lines, where every `## ` line is a heading: the first heading named
        `name` and the next heading after it, found at `find` speed. The close's recheck asks about a few
        lessons in each of many LESSONS blobs (a blob a commit, 3,000 lessons each at 100x): indexing all of
        them per blob cost more than reading it. A blob asked about more lessons (the walk asks about every
        line still pending in each) is indexed once instead (`_SEARCHES_BEFORE_INDEX`)."""
        data, head = self.data, b"## " + name
        at = 0 if data.startswith(head) else -1
        search_from = 0
        while True:
            if at < 0:
                found = data.find(b"\n" + head, search_from)
                if found < 0:
                    return None
                at = found + 1
            after = at + len(head)
            if after == len(data) or data[after:after + 1] in (b" ", b"\n"):
                break
            search_from, at = at, -1
        end = data.find(b"\n## ", at)
        return at, (end + 1 if end >= 0 else len(data))

    def has(self, lesson_id: str, line: bytes) -> bool:
        """Whether the lesson's section holds `line` as whole lines (LF or CRLF)."""
        where = self.span(lesson_id)
        if where is None:
            return False
        at = self.data.find(b"\n" + line, where[0], where[1])
        while at >= 0:
            after = at + 1 + len(line)
            if after >= len(self.data) or self.data[after:after + 1] in (b"\n", b"\r"):
                return True
            at = self.data.find(b"\n" + line, at + 1, where[1])
        return False


def _lines_found(pattern: _LinePattern, data: bytes) -> Iterator[tuple[int, bytes | None]]:
    """Where the lines `pattern` finds start in `data`, in order, each with its group (None for a fence line).
    The regex finds a line by the newline before it (a line-start anchor makes it eight times slower); the
    first line, which has none, is matched on its own, so the text is never copied with one put in front (a
    75 MB copy at 100x)."""
    first = pattern.first.match(data)
    if first is not None:
        yield 0, first[1]
    for match in pattern.after_newline.finditer(data):
        yield match.start() + 1, match[1]


@dataclass(frozen=True)
class _LinePattern:
    """One regex for a line, as it matches after a newline and at the text's start."""

    after_newline: re.Pattern[bytes]
    first: re.Pattern[bytes]

    @classmethod
    def of(cls, body: bytes) -> _LinePattern:
        return cls(re.compile(rb"\n(?:" + body + rb")"), re.compile(rb"(?:" + body + rb")"))


_FENCE_MARKS = b"|".join(re.escape(mark) for mark in fences.FENCE_BYTE_MARKS)
_FENCE_LINE = _LinePattern.of(_FENCE_MARKS)
# A fence line, or a section's heading and its name: the heading's first word, up to a space or the line's end
# (a CR of a CRLF line is kept).
_FENCE_OR_SECTION = _LinePattern.of(_FENCE_MARKS + rb"|## ([^ \n]*)")


# How many lessons are searched for in one LESSONS blob before its sections are indexed: a search reads up to
# the whole blob at C speed, the index reads it once in a Python loop over its 3,000 sections (at 100x).
_SEARCHES_BEFORE_INDEX = 16


def _plain_name(lesson_id: str) -> bool:
    """Whether a heading names `lesson_id` exactly when its bytes spell it: ASCII, not empty, and no space or
    line end (a section's name ends at either)."""
    return bool(lesson_id) and lesson_id.isascii() and " " not in lesson_id and "\n" not in lesson_id


def _values(fields: Iterable[Field], key: str) -> list[str]:
    return [" ".join(item.value.split()) for item in fields if item.key == key]


def _rendered(item: Field) -> bytes:
    return "\n".join(render_field(item.key, item.value)).encode("utf-8")


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


def backing_for(ws: Workspace, log_text: str | None = None) -> Backs:
    """History's verdicts for a git work tree; for plain files outside git, whether the cycle has a LOG entry
    (in `log_text`, else in LOG read now: only then is the whole LOG read)."""
    if ws.state_dir is not None:
        return Backing(ws)
    return uncommitted(ws.read("log") if log_text is None else log_text)


# A fence line (`gitmem.memory.fences`), or a `## ` line naming a cycle: the first `cycle <digits>` on it is the
# cycle of a well-formed heading's (nothing before it in a heading says "cycle"), so every heading of cycle N is
# among the lines found for N.
_FENCE_OR_NAMES_A_CYCLE = _LinePattern.of(_FENCE_MARKS + rb"|## [^\n]*?\bcycle ([0-9]{1,18})\b")


def _cycle_of(data: bytes, at: int) -> int | None:
    """The cycle of the LOG heading line at `at`; None for a close entry or a line that is no heading."""
    parsed = log.parse_any_heading(fences.line_starting_at(data, at)[3:].decode("utf-8", "replace"))
    return parsed[1] if parsed is not None else None
