"""What a close costs is counted, not timed (issue 31): the work that grows with history is done once per
process, however many days a close catches up and however many of its steps ask."""
from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from gitmem.close import CloseResult, run_close
from gitmem.memory.once import Recent, SameEntries
from gitmem.memory_writer import MemoryWriter, WriteRefused
from gitmem.workspace import Workspace
from tests.support.helpers import HUMAN, GitRepo, counting
from tests.support.world import World

UTC = ZoneInfo("UTC")


def _week_of_cycles(world: World) -> None:
    for day in range(9, 14):
        world.cycle(datetime(2026, 11, day, 9, 0, tzinfo=UTC))
    world.commit("five days of cycles")


def _close_after_the_week(world: World) -> CloseResult:
    """The close run just after midnight of 14 November, catching up the days before it."""
    world.clock.moment = datetime(2026, 11, 14, 0, 31, tzinfo=UTC)
    world.reload()
    return run_close(Workspace.at(world.git.path, world.config), clock=world.clock)


def _a_lesson_confirmed_twice(world: World) -> str:
    """A lesson written on 10 November and confirmed by two later cycles: the close of the 11th promotes it."""
    from tests.support.world import at

    world.cycle(at(10, 9))
    lesson = world.lesson(at(10, 9, 30), "Tests first", rule="Run the tests first.")
    world.cycle(at(10, 10))
    world.confirm(at(10, 10, 30), lesson)
    world.cycle(at(11, 9))
    world.confirm(at(11, 9, 30), lesson)
    return lesson


def test_a_close_catching_up_days_judges_log_as_it_stands_once(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """Before each day's entry the close makes sure LOG is valid as it stands; after the first judgement LOG
    changed only by the close's own validated appends, so it is not judged whole again (75 MB a day at 100x)."""
    from gitmem.checks import standing

    _week_of_cycles(world)
    judged = counting(monkeypatch, standing, "log_standing")
    result = _close_after_the_week(world)
    assert len(result.days) == 5
    assert len(judged) == 1


def test_a_log_changed_by_anyone_else_is_judged_again(world: World) -> None:
    """The judgement holds for the LOG this writer left: a heading written by hand in between is found."""
    _week_of_cycles(world)
    world.clock.moment = datetime(2026, 11, 14, 0, 31, tzinfo=UTC)
    world.reload()
    memory = world.memory
    memory.add_close_entry({"Cycles": "one"})
    log_path = world.git.path / world.path("log")
    log_path.write_bytes(log_path.read_bytes() + b"\n## not a heading of any entry\n\n- Task: x\n")
    with pytest.raises(WriteRefused, match="holds invalid entries"):
        memory.add_close_entry({"Cycles": "two"})


def _decisions_of_a_month(world: World) -> None:
    """Twelve decisions answered weeks ago, two still waiting, and cycles that said they were blocked on one."""
    world.clock.moment = datetime(2026, 10, 1, 9, 0, tzinfo=UTC)
    old = [world.memory.ask_decision(title=f"an old question {n}", recommendation="yes") for n in range(12)]
    waits = world.memory.ask_decision(title="a question still open", recommendation="wait")
    world.memory.ask_decision(title="another one", recommendation="wait")
    world.commit("questions")
    world.clock.moment = datetime(2026, 10, 2, 9, 0, tzinfo=UTC)
    human = MemoryWriter(Workspace.at(world.git.path, world.config), clock=world.clock, author_email=HUMAN[1])
    for item in old:
        human.answer_decision(item.id, answer="yes", name=HUMAN[0], email=HUMAN[1])
    world.commit("answers", author=HUMAN)
    for day in range(9, 14):
        world.clock.moment = datetime(2026, 11, day, 9, 0, tzinfo=UTC)
        world.memory.add_log_entry(task=f"task {day}", outcome="no-build", result="waited", blocked=waits.id)
        world.memory.add_now_block(did="waited", human="nothing", next="carry on")
        world.commit(f"blocked on day {day}", world.path("log"), world.path("now"))


def test_a_close_catching_up_days_asks_an_answered_decision_once(world: World,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Which decisions waited at each day's end is asked of the decisions that can still wait then: one answered
    before the first day closed ended waits on no later day, and is not asked about again for each day (4,000
    decisions, seven days at 100x)."""
    from gitmem.memory import decisions

    _decisions_of_a_month(world)
    asked = counting(monkeypatch, decisions, "_waiting_at")
    result = _close_after_the_week(world)
    assert len(result.days) == 5
    assert len(asked) == 2 * 5, len(asked)
    assert all("a question still open" in report["Waiting"] for report in result.reports), result.reports


def test_a_close_catching_up_days_reads_logs_tail_for_blocked_cycles_once(world: World,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The cycles blocked on a decision are read back to its ask once for all the days a close catches up, not
    once a day (a decision waiting a month has a month of a 75 MB LOG read back at 100x), and each day still
    finds those of its days."""
    from gitmem.close import writeup
    from gitmem.memory import log

    _decisions_of_a_month(world)
    read = counting(monkeypatch, log, "tail_since")
    found: list[dict[str, list[str]]] = []
    real = writeup.blocked_tasks

    def kept(*args: Any, **kwargs: Any) -> dict[str, list[str]]:
        found.append(real(*args, **kwargs))
        return found[-1]

    monkeypatch.setattr(writeup, "blocked_tasks", kept)
    result = _close_after_the_week(world)
    assert len(result.days) == 5
    assert len(read) == 1
    assert found == [{"D-0013": [f"task {day}" for day in range(9, end)]} for end in range(10, 15)], found


def test_a_cached_confirmation_is_looked_for_once_in_each_blob(memrepo: GitRepo,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A line the cache says a commit added is looked for once in that commit's LESSONS and once in its parent's
    (3,000 lines at 100x), and every verdict is the one a walk of history gives. (Judged again: no verdict is
    kept from before, gitmem.close.verdict_memo.)"""
    from gitmem.close import backing, verdict_memo
    from gitmem.memory import lessons
    from gitmem.workspace.proofs import proofs_file

    sections = []
    for n in range(1, 11):
        sections.append("\n".join([f"## L-{n:04d} · Lesson {n}", "- Happened: 2026-11-10 (cycle 1) — it broke",
                                    "- Why: no tests", "- Change: run them", "- Rule: Run the tests.",
                                    "- Status: open", ""]))
    memrepo.commit_files({"LESSONS.md": "# LESSONS\n\n" + "\n".join(sections)}, "lessons by hand")
    text = memrepo.read("LESSONS.md")
    for n in range(1, 11):
        text = text.replace(f"## L-{n:04d} · Lesson {n}\n- Happened: 2026-11-10 (cycle 1) — it broke\n",
                            f"## L-{n:04d} · Lesson {n}\n- Happened: 2026-11-10 (cycle 1) — it broke\n"
                            "- Confirmed: 2026-11-10 (cycle 2) — held\n")
    memrepo.commit_files({"LESSONS.md": text}, "confirmed by hand")
    doc = lessons.parse(memrepo.read("LESSONS.md"))
    wanted = [(lesson, item) for lesson in doc.lessons for item, _ in lesson.confirmations]
    assert len(wanted) == 10
    walked = backing.Backing(memrepo.ws())
    walked.resolve(wanted)
    proofs_file(memrepo.path, verdict_memo.kind_of(("LESSONS.md", "LOG.md"))).unlink()
    looked = counting(monkeypatch, backing._LessonsBytes, "has")
    cached = backing.Backing(memrepo.ws())
    cached.resolve(wanted)
    assert len(looked) == 2 * len(wanted), len(looked)
    assert [cached(lesson, item) for lesson, item in wanted] == [walked(lesson, item) for lesson, item in wanted]


def test_a_close_judges_its_promoted_lessons_once(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """The close judges the promotions it writes (LESSONS and RULES as one change), then the whole change before
    its commit: the lessons are judged once for the same bytes, not lesson by lesson again (3,000 lessons at
    100x), and the promotion still lands."""
    from gitmem import checks
    from gitmem.checks import lessons_checks
    from tests.support.world import at, d

    lesson = _a_lesson_confirmed_twice(world)
    monkeypatch.setattr(checks, "_JUDGED", Recent(4))        # nothing judged before in this process
    judged = counting(monkeypatch, lessons_checks, "lesson_rules")
    result = world.close(d(11), at(11, 23))
    assert [p["lesson"] for p in result.promoted] == [lesson]
    assert len(judged) == 1, judged


def test_logs_cycle_headings_are_indexed_in_one_pass_that_knows_the_fences(
        memrepo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    """The headings of the cycles a close asks about are indexed with the fence lines in one pass over LOG (75 MB
    at 100x), not a second pass for the fences: a fenced example of a heading is still no heading, before or after
    a real one, whichever fence mark opens or closes it."""
    from gitmem.close import backing
    from gitmem.memory import fences

    entry = "## 2026-01-0{day} 10:00 UTC · cycle {n} · built\n\n- Task: t\n- Tried: x\n- Evidence: e\n- Result: r\n\n"
    text = "# LOG\n\n" + entry.format(day=1, n=1)
    text += "```\n" + entry.format(day=2, n=2) + "~~~\n"                  # cycle 2 only as a fenced example
    text += "~~~text\n" + entry.format(day=2, n=3) + "```\n" + entry.format(day=3, n=3)
    (memrepo.path / "LOG.md").write_text(text, encoding="utf-8")
    built = counting(monkeypatch, fences, "Fenced")
    found = backing.Backing(memrepo.ws())._live_text()
    data = text.encode()
    assert found.heading_offset(1) == data.index(b"## 2026-01-01")
    assert found.heading_offset(2) is None
    assert found.heading_offset(3) == data.index(b"## 2026-01-03")
    assert built == []


def test_a_promoted_lessons_gate_and_lines_are_read_once(world: World,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Each Confirmed line is read (its cycle parsed) once per lesson: history's verdict takes the lesson's own
    reading; and the gate of a candidate is judged once: LESSONS re-read before writing finds the lesson
    unchanged (the one object of an unchanged lesson, `once.SameEntries`), whose gate stands (thousands of lines
    and a thousand candidates at 100x). The promotion still lands."""
    from gitmem.close import backing, gates
    from gitmem.memory import lessons
    from tests.support.world import at, d

    lesson = _a_lesson_confirmed_twice(world)
    gated = counting(monkeypatch, gates, "gate")
    read = counting(monkeypatch, lessons, "parse_event")
    keyed = counting(monkeypatch, backing, "_key")
    result = world.close(d(11), at(11, 23))
    assert [p["lesson"] for p in result.promoted] == [lesson]
    confirmed = [args for args in read if args[0].key == "Confirmed"]
    assert len(confirmed) == 2, confirmed     # the two lines, each once
    assert len(keyed) == 2, keyed             # each line's digest once: the gate's question finds its verdict
    assert len(gated) == 1, gated            # eligible; the re-read before writing finds it unchanged


_PIECES = ("```", "~~~", "```text", "  ```", "## L-0001 · a", "## L-0002", "## L-0001 · again", "## ", "##x",
           "- Confirmed: 2026-11-10 (cycle 2) — held", "## 2026-01-01 10:00 UTC · cycle 1 · built",
           "## 2026-01-02 10:00 UTC · cycle 2 · built", "## 2026-01-02 10:00 UTC · cycle 02 · built",
           "## notes on cycle 2", "text", "", "## L-0003 x\r")


def test_the_one_pass_indexes_find_what_the_fence_readers_find() -> None:
    """The sections of a LESSONS blob and the cycle headings of LOG, found with their fence lines in one pass,
    are those `gitmem.memory.fences` finds outside fences, on texts mixing fences, headings and fenced examples."""
    import random

    from gitmem.close import backing
    from gitmem.memory import fences, log

    chooser = random.Random(31)
    for _ in range(400):
        data = "\n".join(chooser.choice(_PIECES) for _ in range(chooser.randint(0, 14))).encode()
        starts = fences.every_heading(data, b"## ")
        expected: dict[str, tuple[int, int]] = {}
        for start, end in zip(starts, [*starts[1:], len(data)], strict=False):
            name = fences.line_starting_at(data, start)[3:].split(b" ", 1)[0].decode("ascii", "replace")
            expected.setdefault(name, (start, end))
        found = backing._LessonsBytes(data)
        assert {name: found.span(name) for name in expected} == expected, data
        assert found.span("L-0009") is None
        fenced = fences.Fenced(data)
        index = backing._LogText(data)
        for cycle in (1, 2, 3):
            heads = [at for at in starts if not fenced.inside(at)]
            want = next((at for at in heads
                         if (parsed := log.parse_any_heading(fences.line_starting_at(data, at)[3:].decode()))
                         and parsed[1] == cycle), None)
            assert index.heading_offset(cycle) == want, (data, cycle)


def test_a_close_scans_its_promoted_lessons_for_secrets_once(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every changed memory file is decoded and scanned (conflict markers, secrets) as it is judged: the close's
    promotions are judged as written, then in the whole change before the commit, and LESSONS (1.4 MB at 100x)
    is scanned once for the two."""
    from gitmem.checks import every_memory_file
    from tests.support.world import at, d

    lesson = _a_lesson_confirmed_twice(world)
    monkeypatch.setattr(every_memory_file, "_JUDGED", Recent(6))      # nothing judged before here
    scanned = counting(monkeypatch, every_memory_file, "scan_markers_and_secrets")
    result = world.close(d(11), at(11, 23))
    assert [p["lesson"] for p in result.promoted] == [lesson]
    assert [args[0] for args in scanned].count(world.path("lessons")) == 1, scanned


def test_a_now_block_judged_alone_does_not_decode_now(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """A write is judged with its own file only: NOW's cycle numbers, which need LOG to agree with, say nothing
    then, so NOW (10 MB at 100x, and the close writes its plan there) is not decoded for them. With LOG there,
    a block for a cycle LOG skipped is still refused."""
    from gitmem.checks import CheckInput, cycle_numbers, run_checks
    from gitmem.gitio import Snapshot
    from tests.support.world import at, d

    world.cycle(at(10, 9))
    decoded = counting(monkeypatch, cycle_numbers, "decode_file_text")
    world.memory.add_plan_block(plan_for=d(11), did="planned", human="nothing", next="carry on")
    assert decoded == []
    now_path, log_path = world.path("now"), world.path("log")
    old = {now_path: world.read(now_path).encode(), log_path: world.read(log_path).encode()}
    ahead = world.read(now_path).replace("# NOW\n", "# NOW\n\n## 2026-11-10 10:00 UTC · cycle 9\n"
                                         "- Did: x\n- Human: y\n- Next: z\n", 1).encode()
    new = {**old, now_path: ahead}
    found = run_checks(CheckInput(world.config, Snapshot("old", old.get), Snapshot("new", new.get)))
    assert [v.code for v in found if v.path == now_path] == ["GM105"], found


def test_the_promotions_are_judged_with_each_other_file_read_once(world: World,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The promotions are judged with the memory files they leave as they are (LOG is 75 MB at 100x): each is
    read once for both sides of the change, not once for each."""
    from gitmem.close import commit_guard

    _a_lesson_confirmed_twice(world)
    read: list[str] = []
    real = commit_guard.files.read_bytes

    def counted(root: Any, rel: str) -> bytes | None:
        read.append(rel)
        return real(root, rel)

    monkeypatch.setattr(commit_guard.files, "read_bytes", counted)
    assert commit_guard.write_together(world.memory, {"rules": world.read(world.path("rules"))}) is None
    assert read.count(world.path("log")) == 1, read


def test_the_close_counts_logs_fences_once_before_its_commit(memrepo: GitRepo,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Before its commit the close judges its change to LOG twice: as `check` does (GM301), and for its
    permission (only appends). The second takes the first's reading: the old LOG's fence state at its end is
    counted once from LOG's start, not once for each (75 MB at 100x); a rewritten LOG is still refused."""
    from gitmem.close import commit_guard
    from gitmem.memory import fences
    from tests.cycle.test_cost_counts import log_appended_after_commit, log_of

    ws, head = log_appended_after_commit(memrepo)
    counted = counting(monkeypatch, fences, "open_after")
    assert commit_guard.check_result(ws, head, commit_guard.changed_files(ws, head)) == []
    from_start = [args for args in counted if len(args) == 1 or args[1] == 0]
    assert len(from_start) == 1, counted
    memrepo.write("LOG.md", log_of(41).replace("task 3\n", "task three\n"))
    found = commit_guard.check_result(ws, head, commit_guard.changed_files(ws, head))
    assert any("close permission" in line for line in found), found


def test_the_one_pass_indexes_never_copy_the_text() -> None:
    """LOG's cycle headings and a LESSONS blob's sections are indexed in the bytes as read: the text is never
    copied with a newline put in front (75 MB at 100x); the first line is still found."""
    import tracemalloc

    from gitmem.close import backing

    body = "- Evidence: " + "x" * 10_000 + "\n\n"
    entry = "## 2026-01-01 10:{m:02d} UTC · cycle {n} · built\n\n- Task: t\n" + body
    data = "".join(entry.format(m=n % 60, n=n) for n in range(1, 201)).encode()
    lessons_data = "".join(f"## L-{n:04d} · a lesson\n- Why: {body}" for n in range(1, 201)).encode()
    index = backing._LogText(data)
    sections = backing._LessonsBytes(lessons_data)
    tracemalloc.start()
    try:
        assert index.heading_offset(1) == 0
        assert sections.span("L-0001") == (0, lessons_data.index(b"## L-0002"))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert index.heading_offset(200) == data.rindex(b"## ")
    assert peak < len(lessons_data) // 2 and peak < len(data) // 2, (peak, len(data), len(lessons_data))


def test_a_cached_line_reads_each_lessons_blob_once_in_a_history_of_one_confirmation_a_commit(
        memrepo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    """A real history adds each confirmation in a commit of its own (a cycle each), in an order that is not the
    lessons' order. The lines the cache names are judged again commit by commit, oldest first, so each LESSONS
    blob (1.4 MB at 100x, about 25 ms each for libgit2) is read once, not once for its commit and again as the
    next one's parent; the verdicts are those of a walk of history."""
    from gitmem import gitio
    from gitmem.close import backing
    from gitmem.memory import lessons

    count = 100
    text = "# LESSONS\n\n" + "\n".join(
        "\n".join([f"## L-{n:04d} · Lesson {n}", "- Happened: 2026-11-10 (cycle 1) — it broke", "- Why: no tests",
                   "- Change: run them", "- Status: open", ""]) for n in range(1, count + 1))
    memrepo.commit_files({"LESSONS.md": text}, "lessons by hand")
    for step in range(count):
        n = step * 37 % count + 1                  # the lessons confirmed in an order of their own
        text = text.replace(f"## L-{n:04d} · Lesson {n}\n", f"## L-{n:04d} · Lesson {n}\n"
                            "- Confirmed: 2026-11-10 (cycle 2) — held\n", 1)
        memrepo.commit_files({"LESSONS.md": text}, f"confirmed L-{n:04d}")
    doc = lessons.parse(memrepo.read("LESSONS.md"))
    wanted = [(lesson, item) for lesson in doc.lessons for item, _ in lesson.confirmations]
    assert len(wanted) == count
    walked = backing.Backing(memrepo.ws())
    walked.resolve(wanted)
    read = counting(monkeypatch, gitio, "blob")
    cached = backing.Backing(memrepo.ws())
    cached.resolve(wanted)
    assert len(read) <= count + 1, len(read)
    assert [cached(lesson, item) for lesson, item in wanted] == [walked(lesson, item) for lesson, item in wanted]


def test_a_lesson_in_a_blob_without_fences_is_found_without_indexing_every_lesson(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The recheck asks about a few lessons in each of many LESSONS blobs (one a commit, 3,000 lessons each at
    100x). In a blob with no fence line every `## ` line is a heading, so a lesson's section is found by
    searching for its heading, not by indexing every section; a blob with a fence line is indexed as before,
    and both find what the index finds."""
    from gitmem.close import backing

    plain = ("# LESSONS\n\n## L-0001 · a\n- Status: open\n\n## L-00012 · not L-0001\n- Status: open\n\n"
             "## L-0002\r\n- Status: open\n\n## L-0002 · b\n- Confirmed: 2026-11-10 (cycle 2) — held\n").encode()
    fenced = plain.replace(b"## L-0002\r\n", "```\n## L-0002 · fenced\n```\n".encode())
    indexed = counting(monkeypatch, backing, "_lines_found")
    found = backing._LessonsBytes(plain)
    assert found.span("L-0001") == (plain.index(b"## L-0001"), plain.index(b"## L-00012"))
    assert found.span("L-0002") == (plain.index("## L-0002 · b".encode()), len(plain))
    assert found.span("L-0003") is None
    assert found.has("L-0002", "- Confirmed: 2026-11-10 (cycle 2) — held".encode())
    assert indexed == []
    other = backing._LessonsBytes(fenced)
    assert other.span("L-0002") == (fenced.index("## L-0002 · b".encode()), len(fenced))
    assert len(indexed) == 1
    for data in (plain, fenced):
        index = backing._LessonsBytes(data)
        index._fenced = True                       # as a blob with fences is read: the whole index
        quick = backing._LessonsBytes(data)
        for name in ("L-0001", "L-00012", "L-0002", "L-0002\r", "L-0003"):
            assert quick.span(name) == index.span(name), (data, name)


def test_the_close_judges_the_bytes_it_commits_without_reading_them_again(memrepo: GitRepo,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole-change check before the commit judges the changed files as read for the commit: LOG is not read
    from the work tree a second time (75 MB at 100x); what is judged is what the commit holds."""
    from gitmem.close import commit_guard
    from gitmem.confined import files
    from tests.cycle.test_cost_counts import log_appended_after_commit, log_of

    ws, head = log_appended_after_commit(memrepo)
    changed = commit_guard.changed_files(ws, head)
    read = counting(monkeypatch, files, "read_bytes")
    assert commit_guard.check_result(ws, head, changed) == []
    assert [args for args in read if args[1] == "LOG.md"] == [], read
    rewritten = log_of(41).replace("task 3\n", "task three\n").encode()
    found = commit_guard.check_result(ws, head, {**changed, "LOG.md": rewritten})
    assert any("close permission" in line for line in found), found


def test_the_gates_read_the_fields_of_only_the_lessons_with_enough_confirmed_lines(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A close asks every lesson whether it is open with enough Confirmed lines (3,000 at 100x, most with fewer):
    the fields of a lesson without enough lines that could be Confirmed fields are never parsed, those of the
    others only for the lines the gates read (Happened, Confirmed), and the gates find what parsing every lesson
    finds."""
    from gitmem.close import gates
    from gitmem.close.backing import uncommitted
    from gitmem.memory import lessons

    def lesson(n: int, confirmed: int, bullet: str = "-") -> str:
        lines = [f"## L-{n:04d} · Lesson {n}", "- Happened: 2026-11-10 (cycle 1) — it broke", "- Why: no tests",
                 "- Change: run them", "- Rule: Run the tests."]
        lines += [f"{bullet} Confirmed: 2026-11-10 (cycle {2 + k}) — held" for k in range(confirmed)]
        lines += ["- Confirmed later: not a confirmation", "- Status: open", ""]
        return "\n".join(lines)

    text = "# LESSONS\n\n" + "\n".join([lesson(n, n % 3) for n in range(1, 31)] + [lesson(31, 2, "*")])
    log_text = "".join(f"## 2026-11-10 0{k}:00 UTC · cycle {k} · built\n\n- Task: t\n- Result: r\n\n"
                       for k in (1, 2, 3))
    doc = lessons.parse(text)
    parsed = counting(monkeypatch, lessons, "parse_fields")
    keyed = counting(monkeypatch, lessons, "fields_keyed")
    found = gates.eligible(doc, uncommitted(log_text), 2)
    starts = {item.line + 1: item.id for item in doc.lessons}
    read_by_the_gates = sorted({starts[args[1]] for args in keyed})         # type: ignore[index]
    hopeful = [item.id for item in doc.lessons if len(item.confirmations) >= 2]
    assert parsed == [] and read_by_the_gates == hopeful and len(hopeful) == 11
    assert sorted({str(args[2]) for args in keyed}) == ["Confirmed", "Happened"]
    assert [c.lesson.id for c in found.candidates] == hopeful


def test_the_days_of_a_close_read_the_answered_line_of_each_decision_not_its_fields(
        world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """Which decisions waited on the days a close writes up is judged among those not answered by the first
    day's end: a decision answered before is read for its Answered line alone (4,000 decisions at 100x, nearly
    all answered long ago), and the days find what judging every decision finds."""
    from gitmem.close import writeup
    from gitmem.memory import decisions, fields, timestamps
    from tests.support.world import at

    asked = [world.ask(at(9, 8, n), f"Question {n}") for n in range(6)]
    doc = decisions.parse(world.read("DECISIONS.md"))
    # The human's answers, moved to Resolved (as most of a long-lived DECISIONS is); the fifth after the first day.
    for n, decision in enumerate(asked[:5]):
        when = timestamps.Timestamp.from_datetime(at(12, 9) if n == 4 else at(9, 12, n))
        doc = decisions.move_to_resolved(doc, decision, answer="yes", answered=when, name=HUMAN[0], email=HUMAN[1])
    world.git.commit_files({"DECISIONS.md": decisions.render(doc)}, "answers", author=HUMAN)
    monkeypatch.setattr(decisions, "_PARSED", SameEntries())          # as a new process reads them: none read yet
    doc = decisions.parse(world.read("DECISIONS.md") + "\n")
    moment = datetime(2026, 11, 14, 0, 31, tzinfo=UTC)
    parsed = counting(monkeypatch, fields, "parse_fields")
    monkeypatch.setattr(decisions, "parse_fields", fields.parse_fields)
    week = writeup.Week(moment)
    found = [week.waiting(doc, datetime(2026, 11, day, 23, 59, tzinfo=UTC)) for day in (10, 11, 12, 13)]
    read_by_the_close = len(parsed)
    assert read_by_the_close == 2                      # the two that may have waited: the rest by one line each
    assert [[item.id for item in day] for day in found] == [asked[4:], asked[4:], asked[5:], asked[5:]]
    assert found == [decisions.waiting(doc, datetime(2026, 11, day, 23, 59, tzinfo=UTC), as_of=True, now=moment)
                     for day in (10, 11, 12, 13)]


def test_a_close_reads_no_answer_time_of_a_decision_resolved_long_before(world: World,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Whether a decision under Resolved can still have waited on the days a close writes up is told from the day
    its Answered line opens with when that day is long before them (4,000 decisions at 100x, nearly all answered
    months ago): no answer time of theirs is read, and the reports are those of the full reading."""
    from dataclasses import replace

    from gitmem.memory import decisions

    _decisions_of_a_month(world)
    doc = decisions.parse(world.read(world.path("decisions")))
    answered = tuple(replace(item, section=decisions.RESOLVED) for item in doc.pending if item.is_answered)
    assert len(answered) == 12
    moved = replace(doc, pending=doc.awaiting, resolved=answered)
    (world.git.path / world.path("decisions")).write_text(decisions.render(moved), encoding="utf-8")
    world.commit("answered decisions moved under Resolved", world.path("decisions"), author=HUMAN)
    asked = counting(monkeypatch, decisions, "answered_at")
    result = _close_after_the_week(world)
    assert len(result.days) == 5
    old = {item.id for item in answered}
    assert [args[0].id for args in asked if args[0].id in old] == []   # type: ignore[attr-defined]
    assert all("a question still open" in report["Waiting"] for report in result.reports), result.reports
    assert not any("an old question" in report["Waiting"] for report in result.reports), result.reports

