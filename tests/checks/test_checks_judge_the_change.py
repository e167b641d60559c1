"""A file edited in place is judged on what the change wrote: the lessons it changed (GM4xx) and the lines that
differ (GM9xx: secrets, markers, control characters), given that the old side passed when it was committed, as
LOG's appended entries are. A file judged though unchanged is judged whole."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gitmem import codes
from gitmem.checks import CheckInput, every_memory_file, lessons_checks
from gitmem.checks.rule_inputs import edited_span
from gitmem.config import Config
from gitmem.gitio.snapshots import Snapshot
from gitmem.memory import lessons
from tests.support.builders import lesson, lessons_md
from tests.support.helpers import counting

KEY = "sk-ant-" + "a1B2c3D4e5F6g7H8i9J0kLmN"


def _judged(old: str | None, new: str) -> CheckInput:
    before = Snapshot.from_dict("old", {"LESSONS.md": old.encode()}) if old is not None else None
    return CheckInput(Config(), before, Snapshot.from_dict("new", {"LESSONS.md": new.encode()}))


# Thirty lessons, the seventh without its Why (it reached the branch with --no-verify).
OLD = lessons_md(*(lesson(n, why=n != 7) for n in range(1, 31)))


def test_a_change_to_one_lesson_judges_that_lesson_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    judged = counting(monkeypatch, lessons_checks, "lesson_rules")
    new = OLD.replace("## L-0020 · Guessed the time\n", "## L-0020 · Guessed the time again\n")
    assert lessons_checks.check(_judged(OLD, new)) == []
    assert [args[1].id for args in judged] == ["L-0020"]


def test_a_lesson_the_change_broke_is_reported_on_its_own_line() -> None:
    new = OLD.replace("## L-0020 · Guessed the time\n- Happened: 2026-11-30 (cycle 3) — dates drifted\n",
                      "## L-0020 · Guessed the time\n- Happened: yesterday\n")
    found = lessons_checks.check(_judged(OLD, new))
    line = new.split("\n").index("- Happened: yesterday") + 1
    assert [(v.code, v.line) for v in found] == [(codes.LESSON_INCOMPLETE.code, line)]


def test_a_moved_lesson_is_not_a_changed_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """Lessons shift down when one above them grows: each is still what its change wrote."""
    judged = counting(monkeypatch, lessons_checks, "lesson_rules")
    new = OLD.replace("- Change: read the clock\n", "- Change: read the clock\n  and write it down\n", 1)
    assert lessons_checks.check(_judged(OLD, new)) == []
    assert [args[1].id for args in judged] == ["L-0001"]


def test_a_lessons_file_judged_though_unchanged_is_judged_whole() -> None:
    found = lessons_checks.check(_judged(OLD, OLD))
    assert [v.code for v in found] == [codes.LESSON_INCOMPLETE.code]
    assert [v.code for v in lessons_checks.check(_judged(None, OLD))] == [codes.LESSON_INCOMPLETE.code]


def test_a_secret_written_between_lessons_is_found_on_its_line_and_only_the_lines_that_differ_are_scanned(
        monkeypatch: pytest.MonkeyPatch) -> None:
    scanned = counting(monkeypatch, every_memory_file, "scan_markers_and_secrets")
    monkeypatch.setattr(every_memory_file, "_JUDGED", type(every_memory_file._JUDGED)(6))
    new = OLD.replace("## L-0015 · Guessed the time\n", f"## L-0015 · Guessed the time\n- Seen: {KEY}\n")
    line = new.split("\n").index(f"- Seen: {KEY}") + 1
    found = [v for v in every_memory_file.check(_judged(OLD, new)) if v.path == "LESSONS.md"]
    assert [(v.code, v.line) for v in found] == [(codes.SECRET_LIKE_TOKEN.code, line)]
    # From the first line that differs to the last, with a line on each side: the other lessons are not read.
    assert 0 < sum(len(args[1]) for args in scanned) < len(new) // 10  # type: ignore[arg-type]


def test_conflict_markers_and_an_open_fence_between_lessons_are_found() -> None:
    new = OLD.replace("## L-0012", "<<<<<<< HEAD\n=======\n>>>>>>> theirs\n\n## L-0012", 1)
    assert codes.CONFLICT_MARKERS.code in {v.code for v in every_memory_file.check(_judged(OLD, new))}
    fenced = OLD.replace("- Change: read the clock\n", "- Change: read the clock\n```\n", 1)
    assert codes.UNCLOSED_FENCE.code in {v.code for v in every_memory_file.check(_judged(OLD, fenced))}


_LINES = st.lists(st.sampled_from([b"a", b"b", b"", b"key: x", b"```"]), max_size=8)


@settings(max_examples=300, deadline=None)
@given(old=_LINES, new=_LINES, old_newline=st.booleans(), new_newline=st.booleans())
def test_the_edited_span_holds_every_byte_that_differs_in_whole_lines(old: list[bytes], new: list[bytes],
                                                                       old_newline: bool, new_newline: bool) -> None:
    before = b"\n".join(old) + (b"\n" if old_newline else b"")
    after = b"\n".join(new) + (b"\n" if new_newline else b"")
    start, end = edited_span(before, after)
    assert 0 <= start <= end <= len(after)
    if before == after:
        assert (start, end) == (0, len(after))
        return
    kept = len(after) - end
    assert after[:start] == before[:start] and kept <= len(before) - start
    assert after[end:] == before[len(before) - kept:]
    assert start == 0 or after[start - 1:start] == b"\n"
    assert end == len(after) or after[end - 1:end] == b"\n"


AWS = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"


@pytest.mark.parametrize("old,new", [
    # The value written under a name that was there, blank lines between.
    (f"# LESSONS\n\naws_secret_access_key:\n\n\nnothing yet\n{lesson(1)}",
     f"# LESSONS\n\naws_secret_access_key:\n\n\n{AWS}\n{lesson(1)}"),
    # The name written above a value that was there.
    (f"# LESSONS\n\nsome note:\n{AWS}\n\n{lesson(1)}", f"# LESSONS\n\naws_secret_access_key:\n{AWS}\n\n{lesson(1)}"),
    # Appended after a name the file ended with.
    (f"{lessons_md(lesson(1))}\naws_secret_access_key =\n\n",
     f"{lessons_md(lesson(1))}\naws_secret_access_key =\n\n{AWS}\n"),
    # The value written under a name and its `=`, each on a line of its own (the name two lines of text above).
    (f"{lessons_md(lesson(1))}\naws_secret_access_key\n=\n\nnothing yet\n",
     f"{lessons_md(lesson(1))}\naws_secret_access_key\n=\n\n{AWS}\n"),
    # The name written two lines of text above a value that was there.
    (f"{lessons_md(lesson(1))}\nsome note\n:\n{AWS}\n", f"{lessons_md(lesson(1))}\nsecret_access_key\n:\n{AWS}\n"),
], ids=["value-below-a-name", "name-above-a-value", "appended-after-a-name", "value-two-lines-below-a-name",
        "name-two-lines-above-a-value"])
def test_a_secret_that_the_change_completes_with_a_line_it_did_not_write_is_found(old: str, new: str) -> None:
    found = [v for v in every_memory_file.check(_judged(old, new)) if v.code == codes.SECRET_LIKE_TOKEN.code]
    assert [v.line for v in found] == [new.split("\n").index(AWS) + 1]


@pytest.mark.parametrize("held,code", [("<<<<<<< HEAD", codes.CONFLICT_MARKERS.code),
                                       ("=======", codes.CONFLICT_MARKERS.code),
                                       ("AKIAQ3ZJ7T2KX9LMBV4R", codes.SECRET_LIKE_TOKEN.code),
                                       ("ghp_a1B2c3D4e5F6g7H8i9J0kLmNoPqRsTuVwXyZ12", codes.SECRET_LIKE_TOKEN.code)])
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_line_break_written_before_text_that_was_mid_line_makes_that_text_the_changes(held: str, code: str,
                                                                                        newline: str) -> None:
    """`xx<<<<<<< HEAD` is no marker and `aAKIA…` no key: mid-line, they were allowed. A change that writes only a
    line break before them makes them a line's start; that line's bytes are OLD's end, and were taken for a line
    the change had not touched, read beside the change and so not reported."""
    old = f"{lessons_md(lesson(1))}note: xx{held}\n\nmore\n".replace("\n", newline)
    assert [v for v in every_memory_file.check(_judged(None, old)) if v.code == code] == []
    new = old.replace(f"xx{held}", f"xx{newline}{held}")
    found = [v.line for v in every_memory_file.check(_judged(old, new)) if v.code == code]
    assert found == [new.split("\n").index(f"{held}{newline.strip(chr(10))}") + 1]


def test_a_secret_on_a_line_the_change_only_reads_beside_it_is_not_the_changes() -> None:
    """A key that reached the file past the hooks is the required check's to refuse where it was written; a
    change that writes the next line is not refused for it."""
    old = f"{lessons_md(lesson(1))}\nnote: {KEY}\n"
    assert [v.code for v in every_memory_file.check(_judged(old, old + "another note\n"))
            if v.code == codes.SECRET_LIKE_TOKEN.code] == []
    assert [v.code for v in every_memory_file.check(_judged(old, old + f"again {KEY}\n"))
            if v.code == codes.SECRET_LIKE_TOKEN.code] == [codes.SECRET_LIKE_TOKEN.code]


def test_a_marker_the_change_writes_is_found_though_a_line_before_it_holds_one() -> None:
    """A scan reports a file's first conflict marker only: one that reached the file past the hooks, on the line
    of text before the change, stood for the change's own, and was subtracted as the neighbour's."""
    old = f"{lessons_md(lesson(1))}\n=======\n\nnote\n"
    new = old.replace("note\n", "note\n>>>>>>> theirs\n")
    found = [v.line for v in every_memory_file.check(_judged(old, new)) if v.code == codes.CONFLICT_MARKERS.code]
    assert found == [new.split("\n").index(">>>>>>> theirs") + 1]


LESSON_LISTS = st.lists(st.tuples(st.integers(1, 5), st.sampled_from(["open", "retired"]), st.booleans()),
                        min_size=1, max_size=8)


def _changed_by_content(doc: lessons.LessonsDoc, old_doc: lessons.LessonsDoc) -> list[lessons.Lesson]:
    """What `changed_lessons` means, said the long way: every lesson whose ID, title and body no old lesson has."""
    before = {(item.id, item.title, item.body) for item in old_doc.lessons}
    return [item for item in doc.lessons if (item.id, item.title, item.body) not in before]


@settings(max_examples=150, deadline=None)
@given(LESSON_LISTS, LESSON_LISTS)
def test_the_changed_lessons_are_those_no_old_lesson_of_their_id_holds(old: list[tuple[int, str, bool]],
                                                                          new: list[tuple[int, str, bool]]) -> None:
    """Duplicate IDs, lessons moved, lessons handed over by the previous parse or parsed anew: the same answer."""
    def text(items: list[tuple[int, str, bool]]) -> str:
        return lessons_md(*(lesson(n, status=status, why=why) for n, status, why in items))

    old_doc = lessons.parse(text(old))
    doc = lessons.parse(text(new))
    assert lessons_checks.changed_lessons(doc, old_doc) == _changed_by_content(doc, old_doc)
