"""Unit tests of the pure memory model (gitmem.memory.*): parsing with exact lines, rendering, small edits."""
from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from gitmem.config import Config
from gitmem.memory import decisions, lessons, log, now, roadmap, rules
from gitmem.memory.decoding import decode, decode_lines
from gitmem.memory.fields import Field, parse_fields, render_field, without_fields
from gitmem.memory.lines import strip_trailing_blank
from gitmem.memory.sections import split_heading, split_sections, split_timestamped_heading
from gitmem.memory.timestamps import Timestamp, parse_timestamp
from gitmem.memory_writer import MemoryWriter, WriteRefused
from gitmem.workspace import Workspace


def ts(text: str) -> Timestamp:
    found = parse_timestamp(text)
    assert found is not None, text
    return found


# -- timestamps ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "utc", "label"), [
    ("2026-11-30 09:00 UTC", datetime(2026, 11, 30, 9, 0, tzinfo=UTC), "UTC"),
    ("2026-11-30 10:30 +01:00", datetime(2026, 11, 30, 9, 30, tzinfo=UTC), "+01:00"),
    ("2026-11-30 04:00 -05:00", datetime(2026, 11, 30, 9, 0, tzinfo=UTC), "-05:00"),
    ("2026-11-30 14:45 +05:45", datetime(2026, 11, 30, 9, 0, tzinfo=UTC), "+05:45"),
    ("2026-11-30 09:00 +00:00", datetime(2026, 11, 30, 9, 0, tzinfo=UTC), "+00:00"),
    ("2024-02-29 23:59 UTC", datetime(2024, 2, 29, 23, 59, tzinfo=UTC), "UTC"),
])
def test_parse_timestamp_zones(text: str, utc: datetime, label: str) -> None:
    found = ts(text)
    assert found.moment == utc
    assert found.label == label
    assert str(found) == text


@pytest.mark.parametrize("text", [
    "2026-02-30 10:00 UTC", "2025-02-29 10:00 UTC", "2026-13-01 10:00 UTC", "2026-11-30 24:00 UTC",
    "2026-11-30 09:60 UTC", "2026-11-30 09:00 +24:00", "2026-11-30 09:00 +01:60", "2026-11-30T09:00 UTC",
    "2026-11-30 09:00 Z", "2026-11-30 09:00:00 UTC", "2026-11-30 09:00 GMT", "2026-11-30 09:00 +0100",
    "2026-11-30 9:00 UTC", "26-11-30 09:00 UTC", "2026-11-30 09:00", "2026-11-30 09:00 utc", "",
])
def test_parse_timestamp_rejects(text: str) -> None:
    assert parse_timestamp(text) is None


def test_timestamp_from_datetime_labels_and_truncates() -> None:
    assert str(Timestamp.from_datetime(datetime(2026, 11, 30, 9, 4, 59, 123, tzinfo=UTC))) \
        == "2026-11-30 09:04 UTC"
    assert str(Timestamp.from_datetime(datetime(2026, 11, 30, 9, 4, tzinfo=ZoneInfo("UTC")))) == "2026-11-30 09:04 UTC"
    assert str(Timestamp.from_datetime(datetime(2026, 11, 30, 9, 4, tzinfo=ZoneInfo("Europe/Madrid")))) \
        == "2026-11-30 09:04 +01:00"
    assert str(Timestamp.from_datetime(datetime(2026, 7, 1, 9, 4, tzinfo=ZoneInfo("America/New_York")))) \
        == "2026-07-01 09:04 -04:00"
    assert str(Timestamp.from_datetime(datetime(2026, 1, 5, 9, 4, tzinfo=ZoneInfo("Asia/Kolkata")))) \
        == "2026-01-05 09:04 +05:30"
    with pytest.raises(ValueError):
        Timestamp.from_datetime(datetime(2026, 11, 30, 9, 4))


def test_timestamps_compare_as_instants() -> None:
    earlier, later = ts("2026-11-29 21:31 +01:00"), ts("2026-11-29 21:00 UTC")
    assert earlier.moment < later.moment
    assert earlier.day == date(2026, 11, 29)
    assert ts("2026-11-30 10:00 +01:00").moment == ts("2026-11-30 09:00 UTC").moment


# -- headings, sections, fields, decoding ---------------------------------------------------------

@pytest.mark.parametrize("title", ["D-0042 · Use a - b", "D-0042 - Use a - b", "D-0042 | Use a - b",
                                   "D-0042  ·  Use a - b"])
def test_split_heading_accepts_every_separator(title: str) -> None:
    assert split_heading(title, 1) == ["D-0042", "Use a - b"]


def test_split_timestamped_heading_keeps_timestamp_dashes() -> None:
    when, parts = split_timestamped_heading("2026-11-30 04:00 -05:00 - cycle 481 | no-build")
    assert when == ts("2026-11-30 04:00 -05:00")
    assert parts == ["cycle 481", "no-build"]
    assert split_timestamped_heading("cycle 481 · 2026-11-30 09:00 UTC") == (None, [])
    assert split_timestamped_heading("2026-11-30 09:00 UTC·cycle 4") == (None, [])


def test_split_sections_lines_ends_and_fences() -> None:
    lines = ("# T", "intro", "", "## one", "a", "```", "## not a heading", "```", "", "", "## two", "")
    preamble, sections = split_sections(lines, 2)
    assert preamble == ["# T", "intro", ""]
    assert [(s.title, s.line, s.end) for s in sections] == [("one", 4, 8), ("two", 11, 11)]
    assert sections[0].body == ("a", "```", "## not a heading", "```", "", "")
    assert sections[0].body_start == 5


def test_split_sections_higher_level_heading_ends_section() -> None:
    lines = ("## Pending", "### D-0001 · a", "- x: y", "## Resolved", "### D-0002 · b")
    _, items = split_sections(lines[1:3], 3, 2)
    assert [(s.title, s.line, s.end) for s in items] == [("D-0001 · a", 2, 3)]
    _, outer = split_sections(lines, 2)
    assert [(s.title, s.line, s.end) for s in outer] == [("Pending", 1, 3), ("Resolved", 4, 5)]


def test_parse_fields_continuation_and_lines() -> None:
    body = ["- Task: fix #212", "- Evidence: three tests;", "  run 5521 green;", "    pypi is live.",
            "plain prose line", "  indented after prose", "* Result: published", "- Learned:", "",
            "- Next: later"]
    found = parse_fields(body, 10)
    assert found == (
        Field("Task", "fix #212", 10, 10),
        Field("Evidence", "three tests;\nrun 5521 green;\npypi is live.", 11, 13),
        Field("Result", "published", 16, 16),
        Field("Learned", "", 17, 17),
        Field("Next", "later", 19, 19),
    )


def test_parse_fields_key_grammar() -> None:
    body = ["- lower: no", "- Key:no space", "- Two Words: yes", "- Key: a: b", "-  Key: no"]
    assert [(f.key, f.value) for f in parse_fields(body, 1)] == [("Two Words", "yes"), ("Key", "a: b")]


def test_parse_fields_empty_first_line_with_continuation() -> None:
    assert parse_fields(["- Why:", "  because"], 1) == (Field("Why", "\nbecause", 1, 2),)


def test_render_field() -> None:
    assert render_field("Task", "one") == ["- Task: one"]
    assert render_field("Task", "one\ntwo") == ["- Task: one", "  two"]
    assert render_field("Task", "") == ["- Task:"]
    assert parse_fields(render_field("Why", "\nlater"), 1)[0].value == "\nlater"


def test_render_field_is_what_parse_fields_reads_back() -> None:
    # Trailing spaces would not survive a parse, and a blank continuation line would end the field
    # and drop the rest of the value: both are normalised away when writing.
    assert render_field("Result", "  done  \n\n  second paragraph \n") == ["- Result: done", "  second paragraph"]
    assert parse_fields(render_field("Result", "a\n\nb"), 1)[0].value == "a\nb"
    assert render_field("Why", "\n\n") == ["- Why:"]


def test_decode_bom_crlf_and_invalid_utf8() -> None:
    plain = decode(b"# LOG\n\n## x\n")
    assert plain.problems == ()
    assert plain.lines == ("# LOG", "", "## x", "")
    bom = decode(b"\xef\xbb\xbf# LOG\n")
    assert bom.text == "# LOG\n"
    assert [(p.code, p.line) for p in bom.problems] == [("GM905", 1)]
    crlf = decode(b"# LOG\n\n## a\r\nb\r\n")
    assert crlf.text == "# LOG\n\n## a\nb\n"
    assert [(p.code, p.line) for p in crlf.problems] == [("GM905", 3)]
    both = decode(b"\xef\xbb\xbf# LOG\r\n")
    assert [p.code for p in both.problems] == ["GM905", "GM905"]
    bad = decode(b"# LOG\n\nok\n\xff\xfe broken\n")
    assert bad.text == ""
    assert [(p.code, p.line) for p in bad.problems] == [("GM902", 4)]
    assert decode_lines("\ufeffa\r\nb") == ("a", "b")


# -- NOW ----------------------------------------------------------------------------------------

NOW_TEXT = """\
# NOW
<!-- guidance -->

## 2026-11-30 09:04 UTC · cycle 481
- Did: fixed the parser
- Human: nothing
- Next: release
  then docs

## 2026-11-29 23:50 UTC - plan for 2026-11-30
- Did: close
- Human: D-0042
- Next: fix #212

## 2026-11-29 21:31 +01:00 | cycle 480
- Did: waited
"""


def test_now_parse_exact_lines_and_separators() -> None:
    doc = now.parse(NOW_TEXT)
    assert doc.problems == ()
    assert doc.preamble == ("# NOW", "<!-- guidance -->", "")
    assert [(b.line, b.end, b.kind) for b in doc.blocks] == [(4, 8, "cycle"), (10, 13, "plan"), (15, 16, "cycle")]
    top = doc.top
    assert top is not None and top.cycle == 481 and top.when == ts("2026-11-30 09:04 UTC")
    assert [(f.key, f.value, f.line, f.end) for f in top.fields] == [
        ("Did", "fixed the parser", 5, 5), ("Human", "nothing", 6, 6), ("Next", "release\nthen docs", 7, 8)]
    plan = doc.blocks[1]
    assert plan.plan_for == date(2026, 11, 30) and plan.cycle is None
    assert plan.heading() == "## 2026-11-29 23:50 UTC · plan for 2026-11-30"
    assert doc.blocks[2].when.label == "+01:00"


def test_now_max_blocks_reads_only_the_top() -> None:
    doc = now.parse(NOW_TEXT, max_blocks=1)
    assert len(doc.blocks) == 1 and doc.top is not None and doc.top.cycle == 481
    assert doc.top.end == 8


@pytest.mark.parametrize("heading", [
    "## 2026-11-30 09:04 UTC · cycle", "## 2026-11-30 09:04 UTC · cycle 4 · built", "## cycle 4",
    "## 2026-11-30 09:04 UTC · plan for 2026-02-30", "## 2026-11-30 09:04 · cycle 4", "## Notes",
])
def test_now_malformed_heading_is_gm102_at_its_line(heading: str) -> None:
    doc = now.parse(f"# NOW\n\n## 2026-11-30 10:00 UTC · cycle 5\n- Did: x\n\n{heading}\n- Did: y\n")
    assert [(p.code, p.line) for p in doc.problems] == [("GM102", 6)]
    assert len(doc.blocks) == 1


def test_now_missing_title_is_gm907() -> None:
    assert [p.code for p in now.parse("## 2026-11-30 10:00 UTC · cycle 5\n").problems] == ["GM907"]


def test_now_crlf_and_bom_parse_like_lf() -> None:
    crlf = "\ufeff" + NOW_TEXT.replace("\n", "\r\n")
    assert now.parse(crlf).blocks == now.parse(NOW_TEXT).blocks


def test_now_prepend_block_keeps_other_bytes() -> None:
    block = now.make_block(ts("2026-11-30 15:00 UTC"), did="a", human="b", next="c\nd", cycle=482)
    result = now.prepend_block(NOW_TEXT, block)
    head = "# NOW\n<!-- guidance -->\n\n"
    assert result == head + block.render() + "\n\n" + NOW_TEXT[len(head):]
    assert block.render() == "## 2026-11-30 15:00 UTC · cycle 482\n- Did: a\n- Human: b\n- Next: c\n  d"
    doc = now.parse(result)
    assert doc.problems == ()
    assert [b.cycle for b in doc.blocks] == [482, 481, None, 480]
    shift = len(block.render().split("\n")) + 1
    assert [(b.line - shift, b.end - shift, b.body) for b in doc.blocks[1:]] == \
        [(b.line, b.end, b.body) for b in now.parse(NOW_TEXT).blocks]


def test_now_prepend_block_into_empty_or_title_only() -> None:
    block = now.make_block(ts("2026-11-30 15:00 UTC"), did="a", human="b", next="c", cycle=1)
    assert now.prepend_block("", block) == "# NOW\n\n" + block.render() + "\n"
    assert now.prepend_block("# NOW\n<!-- c -->\n\n", block) == "# NOW\n<!-- c -->\n\n" + block.render() + "\n"


def test_now_make_block_has_fields() -> None:
    block = now.make_block(ts("2026-11-30 15:00 UTC"), did="a", human="b", next="c", plan_for=date(2026, 12, 1))
    assert [(f.key, f.value) for f in block.fields] == [("Did", "a"), ("Human", "b"), ("Next", "c")]
    assert block.heading() == "## 2026-11-30 15:00 UTC · plan for 2026-12-01"


# -- LOG ----------------------------------------------------------------------------------------

LOG_TEXT = """\
# LOG
<!-- append-only -->

## 2026-11-29 08:02 UTC · cycle 478 · built
- Task: answer #209
- Evidence: tests pass;
  412 of them
- Result: built the fix

## 2026-11-29 21:31 +01:00 - cycle 480 - no-build
- Task: release
- Result: token lacks scope

## 2026-11-29 23:50 UTC | close
- Cycles: 2
"""


def test_log_parse_exact_lines() -> None:
    doc = log.parse(LOG_TEXT)
    assert doc.problems == ()
    assert [(e.line, e.end, e.cycle, e.outcome, e.kind) for e in doc.entries] == [
        (4, 8, 478, "built", "cycle"), (10, 12, 480, "no-build", "cycle"), (14, 15, None, None, "close")]
    first = doc.entries[0]
    assert first.get("Task") == "answer #209"
    assert first.get("Evidence") == "tests pass;\n412 of them"
    assert first.get("Learned") is None
    assert [f.line for f in first.fields] == [5, 6, 8]
    assert [e.cycle for e in doc.cycles] == [478, 480]
    assert doc.entries[1].heading() == "## 2026-11-29 21:31 +01:00 · cycle 480 · no-build"
    assert log.outcome_reason(doc.entries[1]) == "token lacks scope"


@pytest.mark.parametrize("heading", [
    "## 2026-11-30 09:00 UTC · cycle 481 · shipped", "## 2026-11-30 09:00 UTC · cycle 481",
    "## 2026-11-30 09:00 UTC · closed", "## 2026-11-30 09:00 UTC · cycle x · built", "## Notes",
])
def test_log_malformed_heading_is_gm306(heading: str) -> None:
    doc = log.parse(LOG_TEXT + "\n" + heading + "\n- Task: x\n")
    assert [(p.code, p.line) for p in doc.problems] == [("GM306", 17)]


def test_log_parse_tail_with_offset() -> None:
    tail_text = "## 2026-11-30 09:00 UTC · cycle 481 · built\n- Task: a\n- Result: b\n"
    doc = log.parse(tail_text, first_line=40, expect_title=False)
    assert doc.problems == ()
    assert [(e.line, e.end) for e in doc.entries] == [(40, 42)]
    assert [f.line for f in doc.entries[0].fields] == [41, 42]
    assert [p.code for p in log.parse(tail_text).problems] == ["GM907"]


def test_log_tail_matches_full_parse() -> None:
    full = log.parse(LOG_TEXT).entries
    for count in (1, 2, 3):
        assert log.tail(LOG_TEXT, count).entries == full[-count:]
        assert log.tail(LOG_TEXT, count).problems == ()
    assert log.tail(LOG_TEXT, 10).entries == full


def test_log_tail_text() -> None:
    chunk, line = log.tail_text(LOG_TEXT, 1)
    assert chunk == "## 2026-11-29 23:50 UTC | close\n- Cycles: 2\n"
    assert line == 14
    chunk, line = log.tail_text(LOG_TEXT, 10)
    assert line == 2 and chunk == LOG_TEXT[len("# LOG\n"):]
    assert log.tail_text(LOG_TEXT, 0) == ("", LOG_TEXT.count("\n") + 1)
    assert log.tail(LOG_TEXT, 0).entries == ()
    bare = "## 2026-11-30 09:00 UTC · cycle 1 · built\n- Task: a\n"
    assert log.tail_text(bare, 5) == (bare, 1)


def test_log_last_cycle_number() -> None:
    assert log.last_cycle_number(LOG_TEXT) == 480          # a close entry is last
    assert log.last_cycle_number("# LOG\n") == 0
    assert log.last_cycle_number("") == 0
    many = "# LOG\n" + "".join(f"\n## 2026-11-30 09:00 UTC · cycle {n} · built\n- Task: t\n- Result: r\n"
                               for n in range(1, 30))
    closes = "".join("\n## 2026-11-30 23:50 UTC · close\n- Cycles: 0\n" for _ in range(20))
    assert log.last_cycle_number(many + closes) == 29


def test_log_append_entry_only_appends() -> None:
    entry = log.make_entry(ts("2026-11-30 09:04 UTC"), cycle=481, outcome="published",
                           fields={"Result": "shipped", "Task": "fix", "Note": "extra", "Tried": "x\ny"})
    assert entry.get("Task") == "fix"
    result = log.append_entry(LOG_TEXT, entry)
    assert result.startswith(LOG_TEXT)
    assert result[len(LOG_TEXT):] == ("\n## 2026-11-30 09:04 UTC · cycle 481 · published\n- Task: fix\n"
                                      "- Tried: x\n  y\n- Result: shipped\n- Note: extra\n")
    assert log.parse(result).entries[:-1] == log.parse(LOG_TEXT).entries
    assert (log.parse(result).entries[-1].line, log.parse(result).entries[-1].end) == (17, 22)
    unterminated = LOG_TEXT.rstrip("\n")
    assert log.append_entry(unterminated, entry).startswith(unterminated + "\n")
    assert log.append_entry("", entry) == "# LOG\n\n" + entry.render() + "\n"


def test_log_crlf_and_bom_parse_like_lf() -> None:
    assert log.parse("\ufeff" + LOG_TEXT.replace("\n", "\r\n")).entries == log.parse(LOG_TEXT).entries


# -- DECISIONS ----------------------------------------------------------------------------------

DECISIONS_TEXT = """\
# DECISIONS

## Pending
Intro text stays.

### D-12345 · Move the docs - or not?
- Asked: 2026-11-30 09:02 -05:00 (cycle 481)
- Context: two lines
  of context
- Recommendation: move

### D-0002 | No cycle
- Asked: 2026-11-29 10:00 UTC
- Recommendation: yes

## Resolved

### D-0001 · Drop 3.9?
- Asked: 2026-11-27 14:10 UTC (cycle 470)
- Recommendation: drop
- Answer: yes
- Answered: 2026-11-28 08:15 +01:00 by Marta Ruiz <marta@example.org>
"""


def test_decisions_parse_exact_lines() -> None:
    doc = decisions.parse(DECISIONS_TEXT)
    assert doc.problems == ()
    assert doc.section_lines == {"Pending": 3, "Resolved": 16}
    assert [(d.id, d.title, d.section, d.line, d.end) for d in doc.all] == [
        ("D-12345", "Move the docs - or not?", "Pending", 6, 10),
        ("D-0002", "No cycle", "Pending", 12, 14),
        ("D-0001", "Drop 3.9?", "Resolved", 18, 22)]
    big = doc.pending[0]
    assert big.number == 12345 and big.asked == ts("2026-11-30 09:02 -05:00") and big.asked_cycle == 481
    assert big.get("Context") == "two lines\nof context"
    assert doc.pending[1].asked == ts("2026-11-29 10:00 UTC") and doc.pending[1].asked_cycle is None
    assert doc.resolved[0].answered == (ts("2026-11-28 08:15 +01:00"), "Marta Ruiz", "marta@example.org")
    assert doc.pending[0].answered is None
    assert doc.next_id() == "D-12346"
    assert doc.find("D-0002") is doc.pending[1] and doc.find("D-0009") is None
    assert decisions.format_id(7) == "D-0007" and decisions.format_id(10000) == "D-10000"


def test_decisions_sections_out_of_order_is_gm201() -> None:
    doc = decisions.parse("# DECISIONS\n\n## Resolved\n\n## Pending\n")
    assert [(p.code, p.line) for p in doc.problems] == [("GM201", 3)]
    assert [(p.code, p.line) for p in decisions.parse("# DECISIONS\n").problems] == [("GM201", 1)]
    extra = decisions.parse("# DECISIONS\n\n## Pending\n\n## Resolved\n\n## Later\n")
    assert [p.code for p in extra.problems] == ["GM201"]


@pytest.mark.parametrize("heading", ["### D-001 · short id", "### D-0001", "### D-0001 · ", "### 0001 · x",
                                     "### D-0001· x"])
def test_decisions_malformed_heading_is_gm208(heading: str) -> None:
    doc = decisions.parse(f"# DECISIONS\n\n## Pending\n\n{heading}\n- Asked: x\n\n## Resolved\n")
    assert [(p.code, p.line) for p in doc.problems] == [("GM208", 5)]


def test_decisions_resolve_moves_to_top_of_resolved() -> None:
    doc = decisions.parse(DECISIONS_TEXT)
    done = decisions.move_to_resolved(doc, "D-0002", answer="go ahead", answered=ts("2026-11-30 10:00 UTC"),
                             name="Marta Ruiz", email="marta@example.org")
    assert [d.id for d in done.pending] == ["D-12345"]
    assert [d.id for d in done.resolved] == ["D-0002", "D-0001"]
    moved = done.resolved[0]
    assert moved.section == "Resolved"
    assert moved.get("Answer") == "go ahead"
    assert moved.answered == (ts("2026-11-30 10:00 UTC"), "Marta Ruiz", "marta@example.org")
    text = decisions.render(done)
    assert "Intro text stays." in text
    assert text.endswith("### D-0002 · No cycle\n- Asked: 2026-11-29 10:00 UTC\n- Recommendation: yes\n"
                         "- Answer: go ahead\n- Answered: 2026-11-30 10:00 UTC by Marta Ruiz <marta@example.org>\n\n"
                         "### D-0001 · Drop 3.9?\n- Asked: 2026-11-27 14:10 UTC (cycle 470)\n- Recommendation: drop\n"
                         "- Answer: yes\n- Answered: 2026-11-28 08:15 +01:00 by Marta Ruiz <marta@example.org>\n")
    again = decisions.parse(text)
    assert again.problems == () and [d.id for d in again.resolved] == ["D-0002", "D-0001"]
    with pytest.raises(KeyError, match="already resolved"):
        decisions.move_to_resolved(done, "D-0002", answer="x", answered=ts("2026-11-30 10:00 UTC"), name="a",
                                   email="a@b")
    with pytest.raises(KeyError, match="not found"):
        decisions.move_to_resolved(done, "D-0099", answer="x", answered=ts("2026-11-30 10:00 UTC"), name="a",
                                   email="a@b")


def test_decisions_make_and_add() -> None:
    doc = decisions.parse(DECISIONS_TEXT)
    item = decisions.make_decision(doc.next_id(), "New?", asked=ts("2026-11-30 11:00 UTC"), cycle=482,
                                   context=None, options="a or b", recommendation="a")
    assert item.render() == ("### D-12346 · New?\n- Asked: 2026-11-30 11:00 UTC (cycle 482)\n- Options: a or b\n"
                             "- Recommendation: a")
    assert item.asked == ts("2026-11-30 11:00 UTC") and item.asked_cycle == 482
    added = decisions.with_decision(doc, item)
    assert [d.id for d in added.pending] == ["D-12346", "D-12345", "D-0002"]   # asked on top (rules 4)
    assert decisions.parse(decisions.render(added)).pending[0].title == "New?"


def test_decisions_crlf_and_bom_parse_like_lf() -> None:
    crlf = decisions.parse("\ufeff" + DECISIONS_TEXT.replace("\n", "\r\n"))
    assert crlf.all == decisions.parse(DECISIONS_TEXT).all


# -- LESSONS ------------------------------------------------------------------------------------

LESSONS_TEXT = """\
# LESSONS

## L-0001 · Guessed the date
- Happened: 2026-06-02 (cycle 158) — wrote June 1
- Why: copied the previous date
- Change: use the clock
- Rule: Take every timestamp from the clock.
- Supersedes: R-01, R-04
- Confirmed: 2026-06-03 (cycle 161) — right date
- Confirmed: 2026-06-14 09:00 UTC (cycle 190) - a week
  of right dates
- Status: promoted R-02

## L-12345 - No status yet
- Happened: 2026-10-05 (cycle 402) – waited
- Why: blocked
- Change: move on
"""


def test_lessons_parse_exact_lines() -> None:
    doc = lessons.parse(LESSONS_TEXT)
    assert doc.problems == ()
    assert [(x.id, x.title, x.line, x.end) for x in doc.lessons] == [
        ("L-0001", "Guessed the date", 3, 12), ("L-12345", "No status yet", 14, 17)]
    first = doc.lessons[0]
    assert first.happened == lessons.Event(date(2026, 6, 2), 158, "wrote June 1", 4)
    assert [(f.line, e) for f, e in first.confirmations] == [
        (9, lessons.Event(date(2026, 6, 3), 161, "right date", 9)),
        (10, lessons.Event(date(2026, 6, 14), 190, "a week\nof right dates", 10))]
    assert first.status == "promoted R-02" and not first.is_open
    assert first.supersedes == ("R-01", "R-04")
    assert first.get("Rule") == "Take every timestamp from the clock."
    second = doc.lessons[1]
    assert second.number == 12345 and second.status == "open" and second.is_open
    assert second.happened is not None and second.happened.text == "waited"
    assert doc.next_id() == "L-12346" and lessons.format_id(3) == "L-0003"


def test_lessons_bad_events_and_statuses() -> None:
    bad = Field("Confirmed", "2026-06-31 (cycle 3) — x", 5, 5)
    assert lessons.parse_event(bad) is None
    assert lessons.parse_event(Field("Confirmed", "yesterday (cycle 3)", 5, 5)) is None
    assert lessons.parse_event(Field("Confirmed", "2026-06-03 (cycle 3)", 5, 5)) == \
        lessons.Event(date(2026, 6, 3), 3, "", 5)
    for status in ("open", "promoted R-07", "promoted R-123", "retired — no longer true", "retired - gone",
                   "retired — a reason that runs\nover two lines"):
        assert lessons.valid_status(status), status
    for status in ("closed", "promoted", "promoted R-7", "retired", "retired —", "Open", "open\nmore",
                   "promoted R-07\nmore"):
        assert not lessons.valid_status(status), status
    assert lessons.promoted_rule("promoted R-07") == "R-07"
    assert lessons.promoted_rule("open") is None


def test_lessons_event_text_may_start_on_a_continuation_line() -> None:
    item = Field("Happened", "2026-06-02 (cycle 158) —\nthe text on the next line", 4, 5)
    assert lessons.parse_event(item) == lessons.Event(date(2026, 6, 2), 158, "the text on the next line", 4)
    assert lessons.event_text(date(2026, 6, 2), 158, "\nlater\n") == "2026-06-02 (cycle 158) — later"


def test_lessons_malformed_heading_is_gm406() -> None:
    doc = lessons.parse(LESSONS_TEXT + "\n## L-12 · short\n- Why: x\n")
    assert [(p.code, p.line) for p in doc.problems] == [("GM406", 19)]


def test_lessons_confirm_inserts_before_status() -> None:
    doc = lessons.parse(LESSONS_TEXT)
    done = lessons.confirm(doc, "L-0001", day=date(2026, 7, 1), cycle=200, evidence="still right")
    lesson = done.find("L-0001")
    assert lesson is not None
    assert lesson.body[-2:] == ("- Confirmed: 2026-07-01 (cycle 200) — still right", "- Status: promoted R-02")
    assert [e.cycle for _, e in lesson.confirmations if e] == [161, 190, 200]
    open_one = lessons.confirm(doc, "L-12345", day=date(2026, 10, 9), cycle=414, evidence="shipped")
    confirmed = open_one.find("L-12345")
    assert confirmed is not None and confirmed.body[-1] == "- Confirmed: 2026-10-09 (cycle 414) — shipped"
    text = lessons.render(done)
    assert lessons.render(lessons.parse(text)) == text
    with pytest.raises(KeyError):
        lessons.confirm(doc, "L-0404", day=date(2026, 1, 1), cycle=1, evidence="x")


def test_lessons_set_status_replaces_the_status_field() -> None:
    doc = lessons.parse(LESSONS_TEXT)
    retired = lessons.set_status(doc, "L-0001", "retired — the rule moved to CI\nand stays there")
    lesson = retired.find("L-0001")
    assert lesson is not None and lesson.status == "retired — the rule moved to CI\nand stays there"
    assert [line for line in lesson.body if "Status" in line] == ["- Status: retired — the rule moved to CI"]
    # Replacing a multi-line Status drops its continuation too; it must not join the field above.
    reopened = lessons.set_status(retired, "L-0001", "open")
    lesson = reopened.find("L-0001")
    assert lesson is not None and lesson.body[-1] == "- Status: open" and "and stays there" not in lesson.body[-2]
    assert lesson.confirmations[-1][0].value == "2026-06-14 09:00 UTC (cycle 190) - a week\nof right dates"
    added = lessons.set_status(doc, "L-12345", "promoted R-05")
    assert added.find("L-12345").status == "promoted R-05"  # type: ignore[union-attr]
    with pytest.raises(KeyError):
        lessons.set_status(doc, "L-0404", "open")


def test_lessons_make_lesson() -> None:
    item = lessons.make_lesson("L-0002", "Redid work", day=date(2026, 7, 20), cycle=201, happened="rewrote it",
                               why="skipped Resolved", change="read Resolved", rule="Read Resolved first.",
                               supersedes="R-01")
    assert item.render() == ("## L-0002 · Redid work\n- Happened: 2026-07-20 (cycle 201) — rewrote it\n"
                             "- Why: skipped Resolved\n- Change: read Resolved\n- Rule: Read Resolved first.\n"
                             "- Supersedes: R-01\n- Status: open")
    assert item.happened == lessons.Event(date(2026, 7, 20), 201, "rewrote it", 1)
    assert item.is_open and item.supersedes == ("R-01",)


# -- RULES --------------------------------------------------------------------------------------

RULES_TEXT = """\
# RULES

## Who I am
- Name: Orla

## Proven rules
<!-- one line each -->
- R-02 · Take every timestamp from the clock (with care). (from L-0001; cycles 161, 190)
- R-03 - Read Resolved first. (from L-0002; cycle 204)
- R-04 | Never publish red builds. (human)

## Retired
- R-01 · Date entries from the previous one. (superseded by R-02 on 2026-06-14)
- R-05 · Post to the forum. (retired on 2026-11-02: the forum closed)
"""


def test_rules_parse_exact_lines() -> None:
    doc = rules.parse(RULES_TEXT)
    assert doc.problems == ()
    assert doc.preamble == ("# RULES", "", "## Who I am", "- Name: Orla", "")
    assert doc.section_lines == {"Proven rules": 6, "Retired": 12}
    assert [(r.id, r.line, r.section) for r in doc.all] == [
        ("R-02", 8, "Proven rules"), ("R-03", 9, "Proven rules"), ("R-04", 10, "Proven rules"),
        ("R-01", 13, "Retired"), ("R-05", 14, "Retired")]
    first = doc.proven[0]
    assert first.text == "Take every timestamp from the clock (with care)."
    assert first.lesson == "L-0001" and first.cycles == (161, 190)
    assert doc.proven[1].cycles == (204,)
    assert doc.proven[2].provenance == "human" and doc.proven[2].lesson is None
    assert doc.retired[0].superseded_by == "R-02"
    assert doc.line_count == 14
    assert doc.next_id() == "R-06" and rules.format_id(120) == "R-120"


def test_rules_bad_lines() -> None:
    text = RULES_TEXT.replace("(human)\n", "(human)\n  and a continuation\n- R-06 · no provenance\n"
                              "- R-07 · wrong (from L-1; cycles 1)\n"
                              "- R-08 · wrong (superseded by R-01 on 2026-01-01)\n")
    doc = rules.parse(text)
    assert [(p.code, p.line) for p in doc.problems] == [("GM501", 11), ("GM506", 12), ("GM506", 13), ("GM506", 14)]
    retired_bad = rules.parse(RULES_TEXT + "- R-09 · proven-style in Retired. (human)\n")
    assert [(p.code, p.line) for p in retired_bad.problems] == [("GM506", 15)]


def test_rules_sections_missing_or_after() -> None:
    assert [p.code for p in rules.parse("# RULES\n\nfree text\n").problems] == ["GM508"]
    late = rules.parse(RULES_TEXT + "\n## Notes\nmore\n")
    assert [(p.code, p.line) for p in late.problems] == [("GM507", 16)]


def test_rules_add_proven_and_retire() -> None:
    doc = rules.parse(RULES_TEXT)
    rule = rules.Rule(doc.next_id(), "Ask before deleting.", "from L-0003; cycles 414, 420", rules.RETIRED)
    added = rules.add_proven(doc, rule)
    assert added.proven[-1].section == rules.PROVEN and added.proven[-1].id == "R-06"
    retired = rules.retire(added, "R-03", superseded_by="R-06", on=date(2026, 12, 1))
    assert [r.id for r in retired.proven] == ["R-02", "R-04", "R-06"]
    assert retired.retired[-1].render() == "- R-03 · Read Resolved first. (superseded by R-06 on 2026-12-01)"
    dropped = rules.retire(retired, "R-04", reason="CI enforces it", on=date(2026, 12, 2))
    assert dropped.retired[-1].provenance == "retired on 2026-12-02: CI enforces it"
    assert retired.retired[-1].retired_on == date(2026, 12, 1) and added.proven[-1].retired_on is None
    # The day comes from the provenance's own form, wherever else " on " appears in the reason.
    on_ci = rules.retire(retired, "R-04", reason="failed on CI", on=date(2026, 12, 2))
    assert on_ci.retired[-1].retired_on == date(2026, 12, 2)
    text = rules.render(dropped)
    assert "<!-- one line each -->\n- R-02" in text
    again = rules.parse(text)
    assert again.problems == ()
    assert [r.id for r in again.retired] == ["R-01", "R-05", "R-03", "R-04"]
    assert rules.render(again) == text
    with pytest.raises(KeyError):
        rules.retire(dropped, "R-01", reason="x", on=date(2026, 12, 2))


def test_rules_crlf_and_bom_parse_like_lf() -> None:
    crlf = rules.parse("\ufeff" + RULES_TEXT.replace("\n", "\r\n"))
    assert crlf.all == rules.parse(RULES_TEXT).all and crlf.problems == ()


# -- ROADMAP ------------------------------------------------------------------------------------

def test_roadmap_current_section() -> None:
    text = ("# ROADMAP\n\n## Done\n- [x] a\n\n## Next\n- [x] b\n  - [ ] nested c\n- [ ] d\n\n"
            "## Later (current)\n- [ ] e\n")
    section = roadmap.current_section(text)
    assert section is not None and (section.title, section.line) == ("Next", 6)
    assert roadmap.first_open_item(text) == "nested c"
    marked = "# ROADMAP\n\n## Now (current)\nprose only\n\n## Then\n- [ ] x\n"
    assert roadmap.current_section(marked).title == "Now (current)"  # type: ignore[union-attr]
    assert roadmap.first_open_item(marked) is None
    assert roadmap.current_section("# ROADMAP\n\n## Done\n- [x] a\n") is None
    assert roadmap.first_open_item("") is None
    assert roadmap.current_section("\ufeff# ROADMAP\r\n\r\n## A\r\n- [ ] x\r\n").end == 4  # type: ignore[union-attr]


# -- whole-file rewrites never drop what did not parse --------------------------------------------

def fixed_clock() -> datetime:
    return datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


def test_rewrites_refuse_files_with_format_problems(tmp_path: Path) -> None:
    memory = MemoryWriter(Workspace.at(tmp_path, Config()), clock=fixed_clock)
    # render() keeps only what parsed, so rewriting this file would silently delete `D-45`.
    broken = DECISIONS_TEXT.replace("### D-0002 | No cycle", "### D-45 · typed by hand")
    assert "D-45" not in decisions.render(decisions.parse(broken))
    (tmp_path / "DECISIONS.md").write_text(broken, encoding="utf-8")
    with pytest.raises(WriteRefused) as caught:
        memory.ask_decision(title="New?", recommendation="yes")
    assert [(v.path, v.line, v.code) for v in caught.value.violations] == [("DECISIONS.md", 12, "GM208")]
    with pytest.raises(WriteRefused):
        memory.answer_decision("D-12345", answer="no", name="Marta Ruiz", email="marta@example.org")
    assert (tmp_path / "DECISIONS.md").read_text(encoding="utf-8") == broken

    (tmp_path / "LESSONS.md").write_text(LESSONS_TEXT + "\n## L-7 · short id\n- Why: x\n", encoding="utf-8")
    with pytest.raises(WriteRefused) as caught:
        memory.confirm_lesson("L-0001", evidence="again", cycle=300)
    assert [(v.line, v.code) for v in caught.value.violations] == [(19, "GM406")]


def test_rewrites_create_missing_files(tmp_path: Path) -> None:
    memory = MemoryWriter(Workspace.at(tmp_path, Config()), clock=fixed_clock)
    item = memory.ask_decision(title="First?", recommendation="yes", cycle=1)
    assert item.asked == ts("2026-11-30 09:00 UTC")
    assert (tmp_path / "DECISIONS.md").read_text(encoding="utf-8") == (
        "# DECISIONS\n\n## Pending\n\n### D-0001 · First?\n- Asked: 2026-11-30 09:00 UTC (cycle 1)\n"
        "- Recommendation: yes\n\n## Resolved\n")
    lesson = memory.add_lesson(title="First", happened="a", why="b", change="c", cycle=1)
    assert lesson.id == "L-0001" and lesson.happened == lessons.Event(date(2026, 11, 30), 1, "a", 1)


def _status_set_alone(doc: lessons.LessonsDoc, lesson_id: str, status: str) -> lessons.LessonsDoc:
    """One status set the long way: the first lesson of the ID, given its status, stands for every lesson of it."""
    lesson = doc.find(lesson_id)
    assert lesson is not None
    body = (*without_fields(strip_trailing_blank(lesson.body), ("Status",)), *render_field("Status", status))
    return lessons.replace_lesson(doc, replace(lesson, body=tuple(body)))


def test_statuses_set_in_one_pass_are_those_set_one_by_one() -> None:
    """An import retires many lessons at once (`with_statuses`): the same file as setting each in turn, duplicate
    IDs and all, and an ID that is not there is refused."""
    text = "# LESSONS\n\n" + "\n\n".join(
        f"## L-{n % 7:04d} · lesson {n}\n- Happened: 2026-11-10 (cycle 1) — x\n- Why: w\n- Change: c\n- Status: open"
        for n in range(1, 30))
    doc = lessons.parse(text)
    statuses = {"L-0001": "retired", "L-0003": "promoted R-02", "L-0006": "retired"}
    one_by_one = doc
    for lesson_id, status in statuses.items():
        one_by_one = _status_set_alone(one_by_one, lesson_id, status)
    assert lessons.with_statuses(doc, statuses) == one_by_one
    assert lessons.render(lessons.with_statuses(doc, statuses)) == lessons.render(one_by_one)
    with pytest.raises(KeyError, match="L-0099"):
        lessons.with_statuses(doc, {"L-0099": "retired"})
