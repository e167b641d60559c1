"""What a no-op cycle pays for history (issue 31): at 100x LOG is 75 MB and LESSONS 3,000 lessons, so each step
that scanned or read them whole again cost the cycle a share of history. Each mechanism here is counted, and
its answers are held to those of the whole scan it replaced."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from gitmem.agents.command import CommandBackend
from gitmem.checks import amendments
from gitmem.cycle.runner import run_cycle
from gitmem.memory import fences, lessons, log
from gitmem.workspace import Workspace
from tests.support.helpers import bodies_read
from tests.support.synth import cached_repo
from tests.support.synth_copy import noop_agent_copy

_OLD_LINE = re.compile(rb"## (?<![^\n]## )")
_PASS = re.compile(rb"\n(?:```|~~~)")
_OLD_WELL_FORMED = re.compile(re.sub(r"\(\?P<\w+>", "(?:", log.HEADING_PATTERN).encode(), re.M)


class _CountedPattern:
    """A compiled pattern whose passes over data are recorded as (start, end)."""

    def __init__(self, real: re.Pattern[bytes], passes: list[tuple[int, int]]) -> None:
        self._real, self._passes = real, passes

    def _record(self, data: bytes, args: tuple[Any, ...]) -> None:
        start = args[0] if args else 0
        end = args[1] if len(args) > 1 else len(data)
        self._passes.append((start, end))

    def findall(self, data: bytes, *args: Any) -> list[Any]:
        self._record(data, args)
        return self._real.findall(data, *args)

    def finditer(self, data: bytes, *args: Any) -> Any:
        self._record(data, args)
        return self._real.finditer(data, *args)

    def search(self, data: bytes, *args: Any) -> re.Match[bytes] | None:
        self._record(data, args)
        return self._real.search(data, *args)


def _entries(count: int) -> bytes:
    lines = ["# LOG", ""]
    for n in range(1, count + 1):
        lines += [f"## 2026-01-01 {n % 24:02d}:00 UTC · cycle {n} · built", f"- Task: task {n} " + "word " * 40,
                  "- Result: done", ""]
    return "\n".join(lines).encode()


# -- the standing check: LOG's headings judged in one pass ---------------------------------------------------------

def test_a_plain_log_is_told_plain_in_one_pass_over_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The cycle's preflight asks whether LOG (75 MB at 100x) is plain: one regex pass, not one per count."""
    passes: list[tuple[int, int]] = []
    for name, value in list(vars(amendments).items()):
        if isinstance(value, re.Pattern) and isinstance(value.pattern, bytes):
            monkeypatch.setattr(amendments, name, _CountedPattern(value, passes))
    data = _entries(300)
    assert amendments._plain_lines(data)
    assert len(passes) == 1, passes


@pytest.mark.parametrize("line", [
    b"## 2026-01-01 10:00 UTC \xc2\xb7 cycle 3 \xc2\xb7 built", b"##   2026-01-01 10:00 UTC - cycle 3 - built  ",
    b"## 2026-01-01 10:00 UTC | close", b"## 2026-01-01 10:00 +02:00 \xc2\xb7 cycle 3 \xc2\xb7 no-build",
    b"## yesterday \xc2\xb7 cycle 3 \xc2\xb7 built", b"## 2026-01-01 10:00 UTC \xc2\xb7 cycle 3 \xc2\xb7 built\r",
    b"## 2026-01-01 10:00 UTC \xc2\xb7 cycle 3 \xc2\xb7 shipped", b"##\t2026-01-01 10:00 UTC \xc2\xb7 close",
    b"## ", b"##", b"### 2026-01-01 10:00 UTC \xc2\xb7 close", b"text ## 2026",
    b"## 2026-01-01 10:00 UTC \xc2\xb7 close x",
    b"## \xd9\xa2026-01-01 10:00 UTC \xc2\xb7 close", b"## 2026-01-01 10:00 UTC \xc2\xb7 cycle 3 \xc2\xb7 built\n## x",
])
@pytest.mark.parametrize("where", ["first", "middle", "last"])
def test_one_pass_tells_plain_as_the_two_counts_did(line: bytes, where: str) -> None:
    history = _entries(3)
    data = {"first": line + b"\n" + history, "middle": history + line + b"\n" + history[6:],
            "last": history + line}[where]
    counted = len(_OLD_LINE.findall(data)) == len(_OLD_WELL_FORMED.findall(data))
    assert amendments._plain_lines(data) == counted


# -- fences: LOG's old lines counted once per process --------------------------------------------------------------

def _fenced_log(size: int) -> bytes:
    """A LOG of about `size` bytes with a fenced block every few entries (one left open at the end)."""
    block = _entries(40)[6:] + b"```\n## 2026-01-01 10:00 UTC \xc2\xb7 close\n```\n~~~\ncode\n~~~\n"
    return b"# LOG\n\n" + block * (size // len(block) + 1) + b"```\nopen\n"


def test_the_fence_lines_of_logs_old_lines_are_counted_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A cycle asks the fence state at the end of LOG's old lines from several steps, in HEAD's copy and in the
    work tree's before and after its entry: bytes that start with lines already counted (a memcmp) are counted
    from there on, so 75 MB are scanned once."""
    passes: list[tuple[int, int]] = []
    monkeypatch.setattr(fences, "_MARK_AFTER_NEWLINE_BYTES", _CountedPattern(fences._MARK_AFTER_NEWLINE_BYTES, passes))
    monkeypatch.setattr(fences, "_COUNTED", [], raising=False)
    old = _fenced_log(5 << 20)
    new = bytes(bytearray(old)) + b"\n## 2026-01-02 10:00 UTC \xc2\xb7 cycle 9 \xc2\xb7 built\n- Task: t\n" * 3
    assert fences.open_after(old, 0, len(old))
    assert fences.open_after(bytes(bytearray(old)), 0, len(old))      # another copy of the same bytes
    assert fences.open_after(new, 0, len(new))
    assert fences.open_after(new, 0, len(old))
    before_last = old.rfind(b"\n## ", 0, len(old) - 5000) + 1       # a reader of LOG's tail, a little back
    assert fences.open_after(new, 0, before_last) == (len(_PASS.findall(old, 0, before_last)) % 2 == 1)
    scanned = sum(end - start for start, end in passes)
    assert scanned < len(old) + 16384, passes


def test_a_count_from_counted_lines_is_the_whole_count(monkeypatch: pytest.MonkeyPatch) -> None:
    """What is counted on (or back) from a counted span equals one whole pass, for a mark cut by the span's end,
    one just before or after it, and bytes that differ inside the span."""
    real = fences._MARK_AFTER_NEWLINE_BYTES
    base = _fenced_log(5 << 20)
    cut = base.rfind(b"\n```", 0, len(base) - 100)
    for shift in range(-5, 6):
        for end in (cut + shift, cut + 2, len(base)):
            monkeypatch.setattr(fences, "_COUNTED", [], raising=False)
            known = cut + shift
            assert fences.count_marks(base, 0, known) == len(real.findall(base, 0, known))
            assert fences.count_marks(base, 0, end) == len(real.findall(base, 0, end))
            assert fences.count_marks(base, 0, end - 7) == len(real.findall(base, 0, end - 7))
    changed = base[:1000] + b"\n```" + base[1004:]                # the same length, one mark more near the start
    monkeypatch.setattr(fences, "_COUNTED", [], raising=False)
    assert fences.count_marks(base) == len(real.findall(base))
    assert fences.count_marks(changed) == len(real.findall(changed)) == fences.count_marks(base) + 1


# -- postflight: the lessons the cycle did not change are not read -------------------------------------------------

def _checked_copy(tmp_path: Path) -> Path:
    """The 1x synthetic repository with a no-op command agent, and the cycle before run in its own process: the
    next one starts with nothing parsed, as a scheduled cycle does."""
    root = noop_agent_copy(cached_repo(1.0), tmp_path / "repo")
    subprocess.run([sys.executable, "-m", "gitmem", "cycle", "--agent", "command"], cwd=root, check=True,
                   capture_output=True)
    return root


def test_a_cycle_that_leaves_lessons_alone_reads_no_lesson(tmp_path: Path, git_env: None,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Postflight dates the lesson lines a cycle wrote; a lesson the cycle left as it was (3,000 at 100x) has
    none, so its fields are not read (they were, for every lesson, in every cycle). The cycle before it was
    checked, so nothing else reads them either."""
    root = _checked_copy(tmp_path)
    assert len(lessons.parse((root / "LESSONS.md").read_text(encoding="utf-8")).lessons) >= 10
    bodies = bodies_read(monkeypatch, [lessons])
    ws = Workspace.open(root)
    report = run_cycle(ws, CommandBackend(ws.config))
    assert report.commit and report.exit_code == 0
    assert bodies.reads == []


# -- amendments: LOG's old lines searched for the marker once per process ------------------------------------------

class _SearchedBytes(bytes):
    """Bytes whose searches record where they start."""

    searched: list[int]

    def find(self, sub: Any, start: Any = None, end: Any = None) -> int:      # type: ignore[override]
        type(self).searched.append(start or 0)
        return super().find(sub, start, end)


def test_an_appended_log_is_searched_for_amendments_past_the_lines_searched_before(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The standing check and each LOG check ask whether LOG holds an amendment (75 MB at 100x): bytes that start
    with a LOG found without one are searched only past it, and a marker cut in two by that end is found."""
    monkeypatch.setattr(log, "_WITHOUT_AMENDS", [])
    monkeypatch.setattr(_SearchedBytes, "searched", [], raising=False)
    old = _SearchedBytes(_entries(6000) + b"- Result: amends li")
    assert len(old) >= log._WITHOUT_AMENDS_FROM
    assert not log.amends_in(old)
    newer = _SearchedBytes(bytes(old) + b"ne 3 of nothing\n")
    assert log.amends_in(newer)
    plain_newer = _SearchedBytes(bytes(old) + b"\n## 2026-01-02 10:00 UTC \xc2\xb7 cycle 9 \xc2\xb7 built\n")
    assert not log.amends_in(plain_newer)
    assert _SearchedBytes.searched[0] == 0 and min(_SearchedBytes.searched[1:]) >= len(old) - len(log.AMENDS)
    assert not log.amends_in(_SearchedBytes(b"# LOG\n\ntext\n" + bytes(old)[6:]))     # another LOG: searched whole
    assert _SearchedBytes.searched[-1] == 0, _SearchedBytes.searched


def test_logs_tail_counts_its_fences_in_the_bytes_this_process_already_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cycle reads LOG whole first (the standing check) and then its tail (the schedule's lateness): the
    tail's fence state is counted in the bytes in hand, where the append's judge then finds it counted, not by
    reading the 75 MB again in blocks and counting them a second time."""
    import time

    from gitmem.confined import files
    from gitmem.workspace import head_and_tail

    data = _fenced_log(5 << 20) + b"```\n\n## 2026-01-03 10:00 UTC \xc2\xb7 cycle 9 \xc2\xb7 built\n- Task: t\n"
    (tmp_path / "LOG.md").write_bytes(data)
    time.sleep(2.1)                 # untouched since, as between two cycles (files.SETTLED_NS)
    passes: list[tuple[int, int]] = []
    monkeypatch.setattr(fences, "_MARK_AFTER_NEWLINE_BYTES", _CountedPattern(fences._MARK_AFTER_NEWLINE_BYTES, passes))
    monkeypatch.setattr(fences, "_COUNTED", [], raising=False)
    held = files.read_bytes(tmp_path, "LOG.md")
    assert held == data
    tail = head_and_tail.read_log_tail(tmp_path, "LOG.md", 1)
    assert [entry.cycle for entry in tail.entries] == [9]
    verdict = log.append_verdict(held, held + b"\n## 2026-01-03 11:00 UTC \xc2\xb7 cycle 10 \xc2\xb7 built\n")
    assert verdict.ok and verdict.open_ is False
    scanned = sum(end - start for start, end in passes)
    assert scanned < len(data) + 16384, passes


def test_a_cycle_that_leaves_log_alone_never_decodes_it(tmp_path: Path, git_env: None,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """LOG is 75 MB at 100x: postflight judges what the agent appended, so a LOG the agent left as the cycle found
    it is compared as bytes and the runner's entry appended, never decoded whole (it was, before the agent)."""
    from gitmem.memory import decoding

    root = _checked_copy(tmp_path)
    found = (root / "LOG.md").read_bytes()
    size = len(found)
    decoded: list[int] = []
    real = decoding._decode

    def counted(data: bytes, *, split: bool) -> decoding.Decoded:
        if len(data) >= size:
            decoded.append(len(data))
        return real(data, split=split)

    monkeypatch.setattr(decoding, "_decode", counted)
    ws = Workspace.open(root)
    report = run_cycle(ws, CommandBackend(ws.config))
    assert report.commit and report.exit_code == 0
    assert decoded == []
    after = (root / "LOG.md").read_bytes()
    assert after.startswith(found) and log.parse(after.decode()).entries[-1].cycle == report.cycle


def test_the_permissions_judge_only_the_lessons_a_cycle_changed(monkeypatch: pytest.MonkeyPatch) -> None:
    """A cycle that adds a lesson changes LESSONS: the permissions judge the lessons it added or changed, not
    the fields of every lesson the file holds (3,000 at 100x); a changed one is still put right."""
    from gitmem.cycle import permissions

    lines = ["# LESSONS", ""]
    for n in range(1, 41):
        lines += [f"## L-{n:04d} · permissions lesson {n}", "- Happened: 2026-11-10 (cycle 1) — it broke",
                  "- Why: w", "- Change: c", "- Confirmed: 2026-11-11 (cycle 2) — held", "- Status: open", ""]
    before = "\n".join(lines)
    added = before + "\n## L-0041 · a new one\n- Happened: 2026-11-12 (cycle 3) — x\n- Why: w\n- Change: c\n" \
        "- Status: open\n"
    bodies = bodies_read(monkeypatch, [lessons])
    result = permissions.enforce({"lessons": before}, {"lessons": added})
    assert result.notes == [] and bodies.bodies() == 1
    bodies.clear()
    edited = added.replace("(cycle 2) — held", "(cycle 2) — rewritten", 1)     # the agent edited L-0001's history
    result = permissions.enforce({"lessons": before}, {"lessons": edited})
    assert [note.split("'")[0] for note in result.notes] == ["restored L-0001"] and "L-0001" in result.texts["lessons"]
    assert bodies.bodies() <= 3
