"""A LESSONS split again after an edit (`memory.resplit`) finds what splitting the whole new text finds."""
from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from gitmem.memory import lessons
from gitmem.memory.decoding import decode_lines
from gitmem.memory.resplit import resplit
from gitmem.memory.sections import split_sections
from tests.memory import reference_parsers as old
from tests.memory.test_parse_equivalence import FENCES, LINES, PROPERTY

BODY_LINES = ["- Happened: 2026-11-10 (cycle 1) — it broke", "- Why: w", "- Change: c", "  more", "",
              "- Confirmed: 2026-11-11 (cycle 2) — held", "- Status: open", "### deeper", "text", *FENCES]


@st.composite
def valid_lessons(draw: st.DrawFn) -> str:
    """A LESSONS an earlier parse found valid: a title, then lessons whose bodies may hold code, deeper headings
    and `## ` lines inside fences (the fences closed, so that every `## L-…` line is a lesson's heading)."""
    parts = ["# LESSONS", *draw(st.lists(st.sampled_from(["", "intro", "## in a fence?"]), max_size=2))]
    if "## in a fence?" in parts:
        parts = ["# LESSONS", "```", "## in a fence?", "```"]
    for number in range(1, draw(st.integers(1, 8)) + 1):
        parts.append(f"## L-{number:04d} · lesson {number}")
        body = draw(st.lists(st.sampled_from(BODY_LINES), max_size=8))
        if sum(line.startswith(("```", "~~~")) for line in body) % 2:
            body.append("```" if body[-1:] != ["~~~"] else "~~~")
        parts += body
    return "\n".join(parts) + draw(st.sampled_from(["", "\n", "\n\n"]))


@st.composite
def edits(draw: st.DrawFn) -> tuple[str, str]:
    """A valid LESSONS and an edit of it: lines replaced by any lines the parsers tell apart, or characters
    inserted or deleted anywhere (a line break among them)."""
    text = draw(valid_lessons())
    if draw(st.booleans()):
        lines = text.split("\n")
        first = draw(st.integers(0, len(lines)))
        last = draw(st.integers(first, min(len(lines), first + 6)))
        lines[first:last] = draw(st.lists(st.sampled_from(LINES + BODY_LINES), max_size=5))
        return text, "\n".join(lines)
    at = draw(st.integers(0, len(text)))
    cut = draw(st.integers(0, 12))
    return text, text[:at] + draw(st.sampled_from(["", "\n", "x", "\n## L-0099 · new\n", "```\n", "\n# top",
                                                   "- Status: promoted R-01"])) + text[at + cut:]


def _starts(text: str) -> list[int]:
    return [section.line for section in split_sections(decode_lines(text), 2)[1]]


@PROPERTY
@given(edits())
@example(("# LESSONS\n## L-0001 · a\n- Why: w\n## L-0002 · b\n```\n## L-0003 · c\n```\n",
          "# LESSONS\n## L-0001 · a\n```\n## L-0002 · b\n```\n## L-0003 · c\n```\n"))
@example(("# LESSONS\n## L-0001 · a\nx\n## L-0002 · b\ny\n", "# LESSONS\n## L-0001 · a\nx\n# top\n## L-0002 · b\ny\n"))
def test_a_resplit_finds_the_sections_the_whole_split_finds(pair: tuple[str, str]) -> None:
    before, after = pair
    edit = resplit(before, after, _starts(before), 2)
    if edit is None:
        return
    old_sections = split_sections(decode_lines(before), 2)[1]
    shifted = [section.line + edit.shift for section in old_sections[edit.moved:]]
    found = split_sections(decode_lines(after), 2)[1]
    assert found[:edit.kept] == old_sections[:edit.kept]
    assert found[edit.kept:len(found) - len(shifted)] == edit.sections
    assert [section.line for section in found[len(found) - len(shifted):]] == shifted
    assert [section.body for section in found[len(found) - len(shifted):]] == \
        [section.body for section in old_sections[edit.moved:]]


@PROPERTY
@given(edits())
def test_lessons_parsed_after_an_edit_are_the_whole_parse(pair: tuple[str, str]) -> None:
    before, after = pair
    lessons.parse(before)
    assert old.lessons_doc(lessons.parse(after)) == old.lessons_parse(after)
    assert lessons.parse(after) == lessons._parsed_whole(after)


def _grown_lessons(count: int) -> str:
    return "# LESSONS\n\n" + "\n\n".join(
        f"## L-{n:04d} · lesson {n}\n- Happened: 2026-11-10 (cycle {n}) — it broke\n- Why: w\n- Change: c\n"
        f"- Confirmed: 2026-11-11 (cycle {n + 1}) — held\n- Status: open" for n in range(1, count + 1)) + "\n"


def test_a_promotion_reads_only_the_lessons_it_changed() -> None:
    """A close that marks lessons promoted changes their Status lines: the lessons after them are the earlier
    parse's own objects (their fields read once), and the lessons it changed are read again."""
    before = _grown_lessons(300)
    first = lessons.parse(before)
    after = before.replace("## L-0007 · lesson 7\n- Happened: 2026-11-10 (cycle 7) — it broke\n- Why: w\n"
                           "- Change: c\n- Confirmed: 2026-11-11 (cycle 8) — held\n- Status: open",
                           "## L-0007 · lesson 7\n- Happened: 2026-11-10 (cycle 7) — it broke\n- Why: w\n"
                           "- Change: c\n- Confirmed: 2026-11-11 (cycle 8) — held\n- Status: promoted R-01")
    edit = resplit(before, after, [lesson.line for lesson in first.lessons], 2)
    assert edit is not None and (edit.kept, edit.moved, edit.shift, len(edit.sections)) == (6, 7, 0, 1)
    second = lessons.parse(after)
    assert second == lessons._parsed_whole(after)
    assert second.lessons[6].status == "promoted R-01"
    assert all(a is b for a, b in zip(first.lessons[7:], second.lessons[7:], strict=True))


def test_lessons_after_a_grown_lesson_move_down_with_their_text() -> None:
    before = _grown_lessons(50)
    first = lessons.parse(before)
    after = before.replace("- Status: open", "- Confirmed: 2026-11-12 (cycle 99) — again\n- Status: open", 1)
    edit = resplit(before, after, [lesson.line for lesson in first.lessons], 2)
    assert edit is not None and (edit.kept, edit.moved, edit.shift) == (0, 1, 1)
    second = lessons.parse(after)
    assert second == lessons._parsed_whole(after)
    assert [lesson.line for lesson in second.lessons[1:]] == [lesson.line + 1 for lesson in first.lessons[1:]]


def test_an_edit_that_opens_a_fence_splits_the_rest_again() -> None:
    """The lessons after an unclosed fence read as code: nothing after the edit can be taken from before."""
    before = _grown_lessons(5)
    lessons.parse(before)
    after = before.replace("- Why: w", "```", 1)
    assert resplit(before, after, _starts(before), 2) is None
    assert lessons.parse(after) == lessons._parsed_whole(after)
    assert len(lessons.parse(after).lessons) == 1
