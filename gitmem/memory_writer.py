"""Memory writes in canonical form: each takes the time from the clock, validates, then writes atomically.

These are the writes that the runner, the agent tools and the `gitmem log add`-style commands share.
They write files only; they never stage or commit.
A write is judged by the GM checks (`gitmem.checks`), which themselves read through `gitmem.workspace`: so
the writer sits above both, not inside the workspace package.
"""
from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from gitmem import codes, gitio, secrets
from gitmem.checks import CheckInput, run_checks
from gitmem.checks.log_checks import FENCE_OPEN_AT_END
from gitmem.checks.violation import Violation
from gitmem.confined import files
from gitmem.errors import ExitCode, GitmemError
from gitmem.gitio import Snapshot
from gitmem.memory import decisions, lessons, log, now, roadmap
from gitmem.memory.decoding import decode_file, decode_text, decoding_problems
from gitmem.memory.now import NowBlock
from gitmem.memory.problems import Problem
from gitmem.memory.timestamps import Timestamp
from gitmem.workspace import CYCLE_ENV, Clock, Workspace, cyclelock, runner_cycle, writelock
from gitmem.workspace.head_and_tail import FileSource, read_end

# How much of LOG's end a write reads first: a few entries' worth, grown only if no cycle is found.
TAIL_BYTES = 64 * 1024


CLOSE = "close"      # the outcome word that amends a close entry (`amend_log_entry`)


def _cycle_fields(*, task: str | None, tried: str | None, evidence: str | None, result: str | None,
                  blocked: str | None, learned: str | None, interactive: bool,
                  extra: dict[str, str] | None) -> dict[str, str]:
    fields = {"Task": task, "Tried": tried, "Evidence": evidence, "Result": result, log.BLOCKED: blocked,
              "Learned": learned, **({log.SESSION: log.INTERACTIVE} if interactive else {}), **(extra or {})}
    return {key: value for key, value in fields.items() if value is not None}


@dataclass(frozen=True)
class NewLesson:
    """A lesson to add in a batch (`MemoryWriter.import_batch`): its fields; its ID, day and cycle come at writing."""

    title: str
    happened: str
    why: str
    change: str
    more: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class BatchDecision:
    """The decision that lists a batch, and the earlier lessons it retires (ID -> their new Status)."""

    title: str
    context: str
    recommendation: str
    retire: dict[str, str] = field(default_factory=dict)


class WriteRefused(GitmemError):
    """A write was refused; `violations` says why. Nothing was written."""

    exit_code = ExitCode.VIOLATIONS


def atomic_write(path: Path, data: bytes) -> None:
    """Write via a temp file in the same directory and rename, so a crash never leaves half a file; a link or
    anything else that is not a regular file at `path` is refused, never written through. Memory files are
    written with `files.write_bytes`, which also proves every directory on the way is a directory of the work tree."""
    path.parent.mkdir(parents=True, exist_ok=True)
    files.write_bytes(path.parent, path.name, data)


_P = ParamSpec("_P")
_T = TypeVar("_T")


def _a_write(write: Callable[_P, _T]) -> Callable[_P, _T]:
    """A write of memory, by anyone: the runner, the agent's tools, an interactive session's commands.

    It holds the repository's write lock from its first read to its last byte: the id or cycle it allocates
    and the file it rewrites are never another writer's (gitmem.workspace.writelock). And every text it is
    given has the environment's secret values masked first (`gitmem.secrets.env_values`): an agent CLI a human
    runs has the human's environment, and one that wrote `$DB_PASSWORD`'s value into a `gitmem log add` would
    put it in memory and, at the human's next commit, in history (the runner masks what a cycle commits, but
    a session's commit is the human's)."""
    @functools.wraps(write)
    def locked(*args: _P.args, **kwargs: _P.kwargs) -> _T:
        writer = args[0]
        assert isinstance(writer, MemoryWriter)
        values = secrets.env_values()
        if values:
            args = tuple(_masked(value, values) for value in args)          # type: ignore[assignment]
            kwargs = {key: _masked(value, values) for key, value in kwargs.items()}  # type: ignore[assignment]
        with writer.locked():
            writer.require_session_may_write()
            return write(*args, **kwargs)
    return locked


def _masked(value: object, values: list[str]) -> Any:
    """A text, or the texts of a mapping of them (a close entry's fields), with `values` masked. Only the
    environment's values: a secret-like token the text holds is refused by the checks (GM903), not hidden."""
    if isinstance(value, str):
        return secrets.mask_values(value, values)
    if isinstance(value, dict):
        return {key: _masked(item, values) for key, item in value.items()}
    return value



def _refuse_undecodable(rel: str, problems: tuple[Problem, ...], lines_before: Callable[[], int] = lambda: 0) -> None:
    """WriteRefused with GM902 when `problems` (of `rel`'s bytes, from after its first `lines_before()` lines) say
    they are not UTF-8."""
    from gitmem.checks.violation import from_problem

    found = [from_problem(rel, p) for p in problems if p.code == codes.NOT_UTF8.code]
    if found:
        shift = lines_before()
        _refuse_not_text(rel, [replace(v, line=v.line + shift) for v in found])


def _refuse_not_text(rel: str, found: Sequence[Violation]) -> None:
    """WriteRefused when `found` (of `rel`) says it is not UTF-8 (GM902): there is no text to build on, and a write
    made of what decoding leaves would lose the human's lines or judge them as something they are not."""
    bad = [v for v in found if v.code == codes.NOT_UTF8.code]
    if bad:
        raise WriteRefused(f"refusing to write memory: {rel} is not valid UTF-8, so there is no text to build on",
                           bad)

class MemoryWriter:
    """Validated, clock-stamped writes to the memory files of one workspace."""

    def __init__(self, workspace: Workspace, *, clock: Clock | None = None, author_email: str | None = None) -> None:
        self.workspace = workspace
        self.root = workspace.root
        self.config = workspace.config
        self.clock = clock
        self.author_email = author_email
        # The identity (`files.file_identity`) of the LOG found valid as it stands, by a whole read or by this writer's
        # own validated appends since: the close appends an entry a day when it catches up, and judging a 75 MB
        # LOG whole before each (100x) is what the first judgement already said.
        self._log_valid_as: tuple[int, ...] | None = None

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the write lock across several steps (the runner's postflight reads, corrects and writes);
        the writes inside take it again, which is free."""
        with writelock.held(self.workspace.state_dir):
            yield

    def require_session_may_write(self) -> None:
        """Refuse a session's write (a process outside any cycle: no GITMEM_CYCLE, and not the runner or the close
        holding the cycle lock) while a cycle or a close runs in this checkout, or while git holds a memory file
        unmerged. The runner commits what the work tree holds when its agent ends, so the session's entry would
        land as the agent's words and its NOW block be dropped for the agent's. And a write into an unmerged file
        lands among git's conflict markers, where resolving the conflict by either side drops it. The cycle's own
        agent and the runner's and the close's writes in their own process write as ever (the runner puts the
        agent's git state right itself). A folder that is no git work tree has neither lock nor index."""
        state_dir = self.workspace.state_dir
        if runner_cycle() is not None or state_dir is None:
            return
        holder = cyclelock.running_elsewhere(state_dir)
        if holder is not None:
            message = (f"refusing to write memory: a {holder.what} is running in this checkout "
                       f"({holder.describe()}) and would take this write for its agent's; write after it ends, or "
                       "from another clone")
            lock = gitio.shown_path(self.workspace.repo, cyclelock.lock_path(state_dir))
            raise WriteRefused(message, [Violation.of(codes.CYCLE_SESSION_WRITE_REFUSED, lock, 1, message=message)])
        held = gitio.unmerged(self.workspace.repo, self.config.memory_paths().values())
        if held:
            raise WriteRefused(f"refusing to write memory: git stopped a merge on a conflict in {', '.join(held)}",
                               [Violation.of(codes.MEMORY_WRITE_UNMERGED, path, self._conflict_line(path), path=path)
                                for path in held])

    def _conflict_line(self, rel: str) -> int:
        """The line of the first conflict marker git left in `rel`; 1 when it left none (a side deleted the file)."""
        from gitmem.checks.every_memory_file import first_marker_line

        try:
            data = files.read_bytes(self.root, rel)
        except files.FileRefused:       # not a regular file: the refusal still names it
            data = None
        return (first_marker_line(data) if data is not None else None) or 1

    def now(self) -> Timestamp:
        return Timestamp.from_datetime((self.clock or self.workspace.clock())())

    def path(self, role: str) -> Path:
        return self.workspace.path(role)

    def read(self, role: str) -> str:
        """The file's text ("" when it is missing). A file that is not UTF-8 (committed with --no-verify) is
        refused, GM902 at the line of its first bad byte: it has no text to build on, and a write made of what
        decoding leaves would lose the human's lines or judge them as something they are not."""
        rel = self.config.path(role)
        data = files.read_bytes(self.root, rel)
        if data is None:
            return ""
        text, problems = decode_file(data)
        _refuse_undecodable(rel, problems)
        return text

    # -- validation and writing ----------------------------------------------------------------
    def _commit_text(self, role: str, new_text: str) -> None:
        rel = self.config.path(role)
        old_bytes = files.read_bytes(self.root, rel)
        new_bytes = new_text.encode("utf-8")
        found = self._refusals(rel, old_bytes, new_bytes)
        if found:
            raise WriteRefused(f"refusing to write {rel}: the result would not be valid memory", found)
        files.write_bytes(self.root, rel, new_bytes)

    def _refusals(self, rel: str, old: bytes | None, new: bytes,
                  facts: dict[tuple[str, str], object] | None = None) -> list[Violation]:
        """The errors the GM checks find in writing `new` over `old` at `rel`.

        Only that file is judged, and no other file is read: no rule about one memory file depends on
        another, except RULES provenance, which these writes never touch. `facts` are what is known of the
        whole file when `old` is only its end (the fence state there).
        """
        before = Snapshot("current", lambda p: old if p == rel else None)
        before.facts.update(facts or {})
        after = Snapshot("proposed", lambda p: new if p == rel else None)
        return [v for v in run_checks(CheckInput(self.config, before, after, self.author_email))
                if v.path == rel and v.is_error]

    def _parse_for_rewrite(self, role: str, model: Any) -> Any:
        """Parse a file that is about to be rewritten whole; refuse while it has format problems.

        A rewrite renders only what parsed, so a malformed entry (say `### D-45 · …`) would vanish
        without a trace. The human fixes the file first; nothing is written.
        """
        text = self.read(role)
        doc = model.parse(text)
        if doc.problems and text.strip():        # a missing or empty file is simply created
            rel = self.config.path(role)
            found = [Violation(rel, p.line, p.code, p.message, p.hint) for p in doc.problems]
            raise WriteRefused(f"refusing to rewrite {rel}: fix its format problems first, or they would be lost",
                               found)
        return doc

    # -- the writes ----------------------------------------------------------------------------
    @_a_write
    def add_log_entry(self, *, task: str, outcome: str, result: str, tried: str | None = None,
                      evidence: str | None = None, learned: str | None = None, blocked: str | None = None,
                      cycle: int | None = None, extra: dict[str, str] | None = None,
                      interactive: bool = False) -> log.LogEntry:
        """One cycle entry. `blocked` names the decisions the cycle waits on; `extra` holds the runner's own
        fields (Started, Salvaged), which only the runner writes; `interactive` marks an interactive session's
        entry (`- Session: interactive`)."""
        if outcome not in log.OUTCOMES:
            raise WriteRefused(f"outcome must be one of {', '.join(log.OUTCOMES)}, not {outcome!r}")
        blocked = self._blocked_on(blocked)
        self._require_valid_log()
        number = cycle if cycle is not None else self.workspace.cycle_for("log")
        if cycle is None and runner_cycle() is None:
            self._require_first_entry()
        entry = log.make_entry(self.now(), cycle=number, outcome=outcome, fields=_cycle_fields(
            task=task, tried=tried, evidence=evidence, result=result, blocked=blocked, learned=learned,
            interactive=interactive, extra=extra))
        try:
            self._append_log(entry)
        except WriteRefused as err:
            if number != self.workspace.last_log_cycle():
                raise
            # The same number again within a runner cycle: GM303 says the number is taken, this says why.
            raise WriteRefused(f"{err}; cycle {number} already wrote its LOG entry: a cycle writes exactly one",
                               err.violations) from None
        return entry

    def _blocked_on(self, blocked: str | None) -> str | None:
        """A `Blocked` value in canonical form, naming only decisions that wait on the human in DECISIONS.md (as
        docs/format.md says it does: the close plans around them and names them in Rule 0 fixes, so an ID that
        names none, a typo or an answered one, would mislead the plan)."""
        try:
            value = log.blocked_value(blocked)
        except ValueError as err:
            raise WriteRefused(str(err)) from None
        if value is None:
            return None
        awaiting = {item.id for item in decisions.parse(self.read("decisions")).awaiting}
        unknown = [name for name in value.split(", ") if name not in awaiting]
        if unknown:
            waiting = ", ".join(sorted(awaiting)) or "none"
            raise WriteRefused(f"--blocked names {', '.join(unknown)}, which no pending decision in "
                               f"{self.config.path('decisions')} is (waiting on the human: {waiting}); a cycle is "
                               "blocked only on a decision still waiting: ask it first (`gitmem decision ask`)")
        return value

    def _require_first_entry(self) -> None:
        """A cycle writes exactly one LOG entry, whoever writes it: the runner's agent through its tools, an MCP
        session, `gitmem log add`. Within a runner cycle a second entry takes the same number, which the checks
        refuse (GM303). Outside one a session lasts until its entry is committed: while LOG's last entry is in
        the work tree only, a second would open another cycle in the same session, and the lessons it confirms
        would count twice for one piece of work. Judged from LOG itself, so a second process is held as the
        first was (an MCP server, a CLI command, two agents at once)."""
        last = self.workspace.last_log_cycle()
        if last and self.workspace.uncommitted_log_cycle(last):
            raise WriteRefused(f"this session already wrote its LOG entry (cycle {last}, not committed yet): a "
                               "session writes exactly one. Say more in that cycle with the other memory commands "
                               f"or in that entry of {self.config.path('log')}; the next entry comes after the "
                               "commit")

    @_a_write
    def amend_log_entry(self, line: int, *, outcome: str, result: str, task: str | None = None,
                        tried: str | None = None, evidence: str | None = None, learned: str | None = None,
                        blocked: str | None = None, interactive: bool = False) -> log.LogEntry:
        """An amendment (rules 4): a new entry that supersedes the invalid entry whose heading is `line`
        (gitmem.checks.amendments). It is numbered and timestamped where it is written, like any entry;
        `outcome` "close" amends a close entry. LOG stays append-only: the old entry is not touched."""
        if outcome not in (*log.OUTCOMES, CLOSE):
            raise WriteRefused(f"outcome must be one of {', '.join((*log.OUTCOMES, CLOSE))}, not {outcome!r}")
        blocked = self._blocked_on(blocked)
        fields = _cycle_fields(task=task, tried=tried, evidence=evidence, result=result, blocked=blocked,
                               learned=learned, interactive=interactive and outcome != CLOSE, extra=None)
        cycle = None if outcome == CLOSE else self.workspace.cycle_for("log")
        entry = log.make_entry(self.now(), cycle=cycle, outcome=None if outcome == CLOSE else outcome,
                               fields=fields, amends=line)
        self._append_log(entry, whole=True)
        return entry

    @_a_write
    def add_close_entry(self, fields: dict[str, str]) -> log.LogEntry:
        self._require_valid_log()
        entry = log.make_entry(self.now(), cycle=None, outcome=None, fields=fields)
        self._append_log(entry)
        return entry

    def _require_valid_log(self) -> None:
        """Refuse to append after a LOG that is invalid as it stands (a bad heading committed without the
        check): the new entry would take a number and a place beside an entry no reader finds. The violations
        name each line and its repair, an amendment (gitmem.checks.standing)."""
        from gitmem.checks.standing import log_standing

        rel = self.config.path("log")
        if self._log_valid_as is not None:
            handle = files.open_read(self.root, rel)
            if handle is not None:
                with handle:
                    if files.file_identity(os.fstat(handle.fileno())) == self._log_valid_as:
                        return
        data, stat = files.read_with_stat(self.root, rel) or (b"", None)
        found = log_standing(rel, data)
        if found:
            _refuse_not_text(rel, found)
            raise WriteRefused(f"refusing to append to {rel}: it holds invalid entries; amend them first "
                               "(`gitmem log amend`, docs/format.md)", found)
        self._log_valid_as = files.file_identity(stat) if stat is not None else None

    def _append_log(self, entry: log.LogEntry, *, whole: bool = False) -> None:
        """Validate the entry against LOG's last entries (against the whole LOG when `whole`: an amendment
        judges the entry it names), then append its bytes; never rewrite the file.

        At 100x scale LOG is 75 MB: rewriting it per entry would cost seconds. The addition is written in
        one call and synced; if anything fails, the file is cut back to its old length.
        """
        rel = self.config.path("log")
        if not files.file_size(self.root, rel):
            self._commit_text("log", log.append_entry("", entry))
            return
        source = FileSource(self.root, rel, self.workspace.state_dir)
        tail, start = read_end(self.root, rel, source.size() if whole else TAIL_BYTES, source.fence_open_at)
        head_only = start > 0
        if head_only:
            _refuse_undecodable(rel, decoding_problems(tail), lambda: self._lines_before(start))
            tail_text = decode_text(tail)
        else:
            tail_text = self.read("log")
            tail = tail_text.encode("utf-8")
        # A LOG written before fences were checked may end inside a code fence: close it first, or the new
        # entry would be more of that code (gitmem.memory.fences).
        fenced = source.fence_open_at(source.size())
        closing = log.fence_closer(tail_text) if fenced else ""
        addition = (closing + log.append_entry(tail_text + closing, entry)[len(tail_text + closing):]).encode("utf-8")
        found = self._refusals(rel, tail, tail + addition, {(FENCE_OPEN_AT_END, rel): fenced})
        if found:
            shift = self._lines_before(start) if head_only else 0
            found = [replace(v, line=v.line + shift) for v in found]
            raise WriteRefused(f"refusing to write {rel}: the result would not be valid memory", found)
        with files.open_append(self.root, rel) as handle:
            before = os.fstat(handle.fileno())
            size = before.st_size
            try:
                handle.write(addition)
                handle.flush()
                os.fsync(handle.fileno())
            except BaseException as err:
                handle.truncate(size)
                if isinstance(err, OSError):      # a full disk: LOG is as it was; say so in one line
                    raise files.failed(rel, err, "written", self.root) or err from None
                raise
            source.appended(handle, before)
            # An entry that passed the checks against LOG's end leaves a valid LOG valid; an amendment is judged
            # whole next time (what it supersedes is what the standing judgement is about).
            if entry.amends is None and self._log_valid_as == files.file_identity(before):
                self._log_valid_as = files.file_identity(os.fstat(handle.fileno()))
            else:
                self._log_valid_as = None

    def _lines_before(self, offset: int) -> int:
        """Lines in LOG before byte `offset`: only counted to report a refused write at the right line."""
        handle = files.open_read(self.root, self.config.path("log"))
        if handle is None:
            return 0
        with handle:
            return handle.read(offset).count(b"\n")

    @_a_write
    def add_now_block(self, *, did: str, human: str, next: str, cycle: int | None = None) -> NowBlock:
        """A `cycle N` block on top of NOW, numbered by the one rule (Workspace.cycle_for). Outside a runner cycle,
        a second block for a cycle LOG has not logged yet is refused: NOW and LOG agree on numbers (GM105)."""
        number = cycle if cycle is not None else self.workspace.cycle_for("now")
        if cycle is None and runner_cycle() is None and number <= self.workspace.top_now_cycle():
            raise WriteRefused(f"NOW already has the block for cycle {number}, and LOG has no entry for that cycle "
                               f"yet: write it first (`gitmem log add`), then add the next block; or edit the "
                               f"cycle {number} block in {self.workspace.config.path('now')}")
        block = now.make_block(self.now(), did=did, human=human, next=next, cycle=number)
        self._commit_text("now", now.prepend_block(self.read("now"), block))
        return block

    @_a_write
    def add_plan_block(self, *, plan_for: date, did: str, human: str, next: str) -> NowBlock:
        block = now.make_block(self.now(), did=did, human=human, next=next, plan_for=plan_for)
        self._commit_text("now", now.prepend_block(self.read("now"), block))
        return block

    @_a_write
    def ask_decision(self, *, title: str, recommendation: str, context: str | None = None,
                     options: str | None = None, cycle: int | None = None) -> decisions.Decision:
        doc = self._parse_for_rewrite("decisions", decisions)
        item = decisions.make_decision(doc.next_id(), title, asked=self.now(),
                                       cycle=cycle if cycle is not None else self.workspace.cycle_for("memory"),
                                       context=context, options=options, recommendation=recommendation)
        self._commit_text("decisions", decisions.render(decisions.with_decision(doc, item)))
        return item

    @_a_write
    def answer_decision(self, decision_id: str, *, answer: str, name: str, email: str) -> decisions.Decision:
        """Answer a Pending decision in place as the human `name <email>`. Refused inside a runner's cycle
        (GITMEM_CYCLE set): that process is the agent's, only the human answers (GM207), and the runner
        would revert the answer after the agent had acted on it."""
        if os.environ.get(CYCLE_ENV, "").strip():
            raise WriteRefused(f"refusing to answer {decision_id}: {CYCLE_ENV} is set, so this runs inside an "
                               "agent's cycle, and only the human answers decisions (the runner reverts an "
                               "agent's answer). Leave it Pending and go on with other work; the human answers "
                               "outside the cycle")
        doc = self._parse_for_rewrite("decisions", decisions)
        try:
            updated, item = decisions.answer_in_place(doc, decision_id, answer=answer, answered=self.now(),
                                                      name=name, email=email)
        except KeyError as err:
            raise WriteRefused(str(err.args[0])) from None
        self._commit_text("decisions", decisions.render(updated))
        return item

    @_a_write
    def add_lesson(self, *, title: str, happened: str, why: str, change: str, rule: str | None = None,
                   supersedes: str | None = None, cycle: int | None = None) -> lessons.Lesson:
        doc = self._parse_for_rewrite("lessons", lessons)
        moment = self.now()
        item = lessons.make_lesson(doc.next_id(), title, day=moment.day,
                                   cycle=cycle if cycle is not None else self.workspace.cycle_for("memory"),
                                   happened=happened, why=why, change=change, rule=rule, supersedes=supersedes)
        self._commit_text("lessons", lessons.render(
            lessons.LessonsDoc(doc.preamble, (*doc.lessons, item), doc.problems)))
        return item

    @_a_write
    def import_batch(self, new: Sequence[NewLesson], describe: Callable[[list[lessons.Lesson]], BatchDecision]
                     ) -> tuple[list[lessons.Lesson], decisions.Decision]:
        """One import (gitmem.interop): the lessons `new`, open, and the one Pending decision that lists the batch
        for the human, which `describe` words once the lessons have their IDs (with the earlier lessons it
        retires). Both files are judged before either is written; if the second write fails, the first is put
        back as it was."""
        added, decision, texts = self.compose_import(new, describe)
        self._commit_texts(texts)
        return added, decision

    def compose_import(self, new: Sequence[NewLesson], describe: Callable[[list[lessons.Lesson]], BatchDecision]
                       ) -> tuple[list[lessons.Lesson], decisions.Decision, dict[str, str]]:
        """What `import_batch` would write, written nowhere: the lessons, the decision, and the new texts of
        LESSONS and DECISIONS by role (`gitmem import --dry-run` judges them as the write would)."""
        doc = self._parse_for_rewrite("lessons", lessons)
        asked = self._parse_for_rewrite("decisions", decisions)
        moment, cycle = self.now(), self.workspace.cycle_for("memory")
        # The batch's lessons follow the highest number in the file, each the next: the file is read once, not
        # once per lesson (a source of 20,000 bullets took minutes).
        first = max((lesson.number for lesson in doc.lessons), default=0) + 1
        added = [lessons.make_lesson(lessons.format_id(number), item.title, day=moment.day, cycle=cycle,
                                     happened=item.happened, why=item.why, change=item.change, more=item.more)
                 for number, item in enumerate(new, first)]
        batch = describe(added)
        updated = lessons.LessonsDoc(doc.preamble, (*doc.lessons, *added), doc.problems)
        updated = lessons.with_statuses(updated, batch.retire)
        decision = decisions.make_decision(asked.next_id(), batch.title, asked=moment, cycle=cycle,
                                           context=batch.context, options=None, recommendation=batch.recommendation)
        return added, decision, {"lessons": lessons.render(updated),
                                 "decisions": decisions.render(decisions.with_decision(asked, decision))}

    def _commit_texts(self, texts: dict[str, str]) -> None:
        """Write several memory files as one change: every file is judged first, and a failed write puts back
        the files written before it."""
        olds = {role: files.read_bytes(self.root, self.config.path(role)) for role in texts}
        found = [v for role, text in texts.items()
                 for v in self._refusals(self.config.path(role), olds[role], text.encode("utf-8"))]
        if found:
            raise WriteRefused("refusing to write: the result would not be valid memory", found)
        written: list[str] = []
        role = ""
        try:
            for role, text in texts.items():
                files.write_bytes(self.root, self.config.path(role), text.encode("utf-8"))
                written.append(role)
        except BaseException as err:
            for done in written:
                old = olds[done]
                if old is None:
                    files.remove_file(self.root, self.config.path(done))
                else:
                    files.write_bytes(self.root, self.config.path(done), old)
            if isinstance(err, OSError):      # a full disk: every file is as it was; say so in one line
                raise files.failed(self.config.path(role), err, "written", self.root) or err from None
            raise

    @_a_write
    def confirm_lesson(self, lesson_id: str, *, evidence: str, cycle: int | None = None) -> lessons.Lesson:
        doc = self._parse_for_rewrite("lessons", lessons)
        try:
            updated = lessons.confirm(doc, lesson_id, day=self.now().day,
                                      cycle=cycle if cycle is not None else self.workspace.cycle_for("memory"),
                                      evidence=evidence)
        except KeyError as err:
            raise WriteRefused(str(err.args[0])) from None
        self._commit_text("lessons", lessons.render(updated))
        return lessons.parse(self.read("lessons")).find(lesson_id)  # type: ignore[return-value]

    @_a_write
    def tick_roadmap(self, item: str) -> str:
        """Tick the open item `item` of ROADMAP's current section (`roadmap.tick`): how the agent says a planned
        piece of work is finished, so that the close's plan moves on to the next one. Returns the item ticked."""
        try:
            ticked, found = roadmap.tick(self.read("roadmap"), item)
        except roadmap.NoSuchItem as err:
            raise WriteRefused(f"{self.config.path('roadmap')}: {err}") from None
        self._commit_text("roadmap", ticked)
        return found
