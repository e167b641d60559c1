"""Properties: generated memory files with fences, CR, NUL and odd whitespace never make a reader raise, and every
reader that starts in the middle of a file agrees with a parse of the whole file.

- The tail of LOG, read backwards from text, bytes or a file on disk, is the whole parse's last entries.
- A LOG change that `check` accepts (judged from the old LOG's end) leaves a LOG that a check of the whole new
  file accepts too: no entry can hide behind a fence that the incremental check did not see.
- The context of a cycle (LOG tail, top NOW block, Pending and Resolved) is what whole parses say it is.
"""
from __future__ import annotations

import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from gitmem.checks import CheckInput, run_checks
from gitmem.config import Config
from gitmem.cycle.budget import NEWLY_RESOLVED, reading
from gitmem.gitio.snapshots import Snapshot
from gitmem.memory import decisions, fences, log, now
from gitmem.workspace import Workspace
from gitmem.workspace.head_and_tail import FileSource

PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
START = datetime(2026, 11, 1, tzinfo=UTC)

# Lines a hostile or careless writer puts in a memory file.
ODD_LINES = ["```", "~~~", "```python", "````", " ```", "## not a heading", "# Title", "### D-0099 · fake",
             "## Resolved", "## 2099-01-01 00:00 UTC · cycle 999 · built", "- Task: x", "- Result: y", "  more",
             "", " ", "\t", "a\rb", "a\0b", "x\r", "- Evidence: ok\r", "·", " - | ", "#", "##", "## ", "-",
             "  ## indented", "- [ ] item", "<!-- note -->"]
odd_lines = st.lists(st.sampled_from(ODD_LINES) | st.text(max_size=12).map(lambda t: t.replace("\n", "")),
                     max_size=8)


def heading(minutes: int, cycle: int | None) -> str:
    moment = (START + timedelta(minutes=minutes)).strftime("%Y-%m-%d %H:%M")
    return f"## {moment} UTC · close" if cycle is None else f"## {moment} UTC · cycle {cycle} · built"


@st.composite
def log_texts(draw: st.DrawFn, *, first_cycle: int = 1, first_minute: int = 0, odd: bool = True) -> str:
    """Entries in order (valid headings, increasing), each body a mix of fields and odd lines."""
    parts: list[str] = []
    cycle, minute = first_cycle, first_minute
    for _ in range(draw(st.integers(0, 6))):
        minute += draw(st.integers(0, 600))
        close = draw(st.integers(0, 5)) == 0
        body = ["- Task: t", "- Result: r"] + (draw(odd_lines) if odd else [])
        parts.append("\n".join([heading(minute, None if close else cycle), *body]))
        cycle += 0 if close else draw(st.integers(1, 3))
    return "".join("\n" + part + "\n" for part in parts)


def _key(entries: tuple[log.LogEntry, ...] | list[log.LogEntry]) -> list[tuple[object, ...]]:
    return [(e.heading(), e.line, e.body) for e in entries]


@PROPERTY
@given(log_texts(), st.booleans(), st.integers(1, 4))
def test_every_tail_reader_agrees_with_the_whole_parse(body: str, crlf: bool, count: int) -> None:
    text = "# LOG\n" + body
    if crlf:
        text = text.replace("\n", "\r\n")
    whole = log.parse(text).entries

    def enough(entries: tuple[log.LogEntry, ...]) -> bool:
        return len(entries) >= count

    expected = _key(whole[-count:])
    assert _key(log.tail_entries(log.TextSource(text), enough, block=64).entries[-count:]) == expected
    assert _key(log.tail_entries(log.BytesSource(text.encode()), enough, block=64).entries[-count:]) == expected
    assert _key(log.tail(text, count).entries) == expected
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "LOG.md"
        path.write_bytes(text.encode())
        for _ in range(2):          # the second read uses the line and fence cache
            found = log.tail_entries(FileSource(Path(folder), "LOG.md", Path(folder)), enough, block=64)
            assert _key(found.entries[-count:]) == expected


def _log_errors(old: bytes | None, new: bytes) -> list[str]:
    snapshot_old = Snapshot.from_dict("old", {"LOG.md": old}) if old is not None else None
    found = run_checks(CheckInput(Config(), snapshot_old, Snapshot.from_dict("new", {"LOG.md": new})))
    return [v.code for v in found if v.path == "LOG.md" and v.is_error]


@PROPERTY
@given(log_texts(), odd_lines, log_texts(first_cycle=50, first_minute=10_000), st.booleans())
@example(old_body="", between=["## 2099-01-01 00:00 UTC · cycle 999 · built", "```"],
         added="\n## 2026-11-07 22:40 UTC · close\n- Task: t\n- Result: r\n```\n", leave_open=False)
def test_a_change_check_accepts_is_a_log_the_whole_check_accepts(old_body: str, between: list[str],
                                                                 added: str, leave_open: bool) -> None:
    old = ("# LOG\n" + old_body + ("```\n" if leave_open else "")).encode()
    before_added = old + "\n".join(between).encode() + (b"\n" if between else b"")
    new = before_added + added.encode()
    incremental = _log_errors(old, new)
    from_scratch = _log_errors(None, new)
    old_alone = _log_errors(None, old)
    if not incremental and set(old_alone) <= {"GM921"}:
        # A fence the old LOG left open may still be open (nothing was added after it): that is the old GM921.
        still_open = {"GM921"} if fences.open_after(new) else set()
        assert set(from_scratch) <= still_open, (incremental, from_scratch)
    # What check accepted is what the whole parse sees: the appended headings are entries, unless the lines
    # appended before them opened a fence of their own (then they are that fence's text, for both readers).
    if not incremental and added and not fences.open_after(before_added):
        assert len(log.parse(new.decode("utf-8", "replace")).entries) >= len(log.parse(added).entries)


@PROPERTY
@given(log_texts(), st.lists(st.sampled_from(ODD_LINES), max_size=6), st.lists(st.sampled_from(ODD_LINES), max_size=6),
       st.integers(1, 3))
def test_context_agrees_with_whole_parses(log_body: str, now_odd: list[str], decision_odd: list[str],
                                          entries: int) -> None:
    log_text = "# LOG\n" + log_body
    now_text = "# NOW\n\n" + "\n".join([heading(5, 2).removesuffix(" · built"), "- Did: d", *now_odd, "- Next: n",
                                        "", "```", "```", "", heading(1, 1).removesuffix(" · built"),
                                        "- Did: old"]) + "\n"
    question = ["### D-0001 · first", "- Asked: 2026-11-01 10:00 UTC (cycle 1)", *decision_odd,
                "- Recommendation: r"]
    decisions_text = "\n".join(["# DECISIONS", "", "## Pending", "", *question, "", "### D-0002 · second",
                                "- Asked: 2026-11-01 10:00 UTC", "- Recommendation: r", "", "## Resolved", ""]) + "\n"
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        for name, text in (("LOG.md", log_text), ("NOW.md", now_text), ("DECISIONS.md", decisions_text),
                           ("RULES.md", "# RULES\n\n## Proven rules\n"), ("LESSONS.md", "# LESSONS\n")):
            (root / name).write_text(text, encoding="utf-8", newline="")
        config = Config()
        config = type(config)(cycle=type(config.cycle)(log_entries=entries))
        ws = Workspace.at(root, config)
        parts, shown = reading(ws)
        whole_log = log.parse(log_text).entries
        assert _key(shown) == _key(whole_log[-entries:])
        top = now.parse(now_text).top
        assert top is not None and parts["now"].text == top.render()
        doc = decisions.parse(decisions_text)
        pending_text = parts["decisions"].text.split(NEWLY_RESOLVED)[0]
        for item in doc.pending:
            assert item.render() in pending_text
        last_cycle = next((e.cycle for e in reversed(whole_log) if e.cycle is not None), 0)
        assert ws.last_log_cycle() == last_cycle


@PROPERTY
@given(st.lists(st.tuples(st.booleans(), st.lists(st.sampled_from(ODD_LINES), max_size=4)), min_size=1, max_size=8))
def test_the_resolved_cut_never_hides_a_fresh_answer(answers: list[tuple[bool, list[str]]]) -> None:
    from gitmem.cycle.budget import _decisions_part

    items, before = [], set()
    for number, (seen, odd) in enumerate(answers, 1):
        decision_id = f"D-{number:04d}"
        items += [f"### {decision_id} · q{number}", "- Asked: 2026-11-01 10:00 UTC", *odd, "- Recommendation: r",
                  "- Answer: a", "- Answered: 2026-11-02 10:00 UTC by Ada <ada@example.com>", ""]
        if seen:
            before.add(decision_id)
    text = "\n".join(["# DECISIONS", "", "## Pending", "", "## Resolved", "", *items])
    whole = decisions.parse(text)
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "DECISIONS.md").write_text(text, encoding="utf-8", newline="")
        part = _decisions_part(Path(folder), "DECISIONS.md", before, 10**9)
    fresh = part.text.split(NEWLY_RESOLVED)[1]
    run = 0                   # answers go on top: the read stops at three old answers in a row, not before
    for item in whole.resolved:
        run = run + 1 if item.id in before else 0
        if run == 3:
            break
        if item.id not in before:
            assert item.render() in fresh
