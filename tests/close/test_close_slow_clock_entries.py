"""LOG is ordered by position (rules 4): an entry from a slow clock (a laptop days behind, a year typed wrong)
may sit below entries dated after it, with a GM310 warning. The close reads LOG back from its end only as far as
a day needs; it must not take such an entry for the place where the day begins and stop there, missing the
day's close above it."""
from __future__ import annotations

from gitmem.errors import ExitCode
from tests.support.helpers import GitRepo

EVIDENCE = "- Evidence: " + "x" * 2900 + "\n"       # entries as long as a real cycle's: LOG outgrows one read


def test_a_second_close_of_a_day_finds_its_close_above_an_entry_from_a_slow_clock(memrepo: GitRepo, cli) -> None:
    text = memrepo.read("LOG.md")
    text += "".join(f"\n## 2026-12-05 1{n}:00 UTC · cycle {n} · built\n- Task: t{n}\n- Result: r\n" for n in (1, 2, 3))
    text += ("\n## 2026-12-05 23:47 UTC · close\n- Day: 2026-12-05\n- Cycles: 3 cycles (3 built, 0 published, "
             "0 no-build)\n")
    text += "".join(f"\n## 2026-12-06 {2 * n - 7:02d}:00 UTC · cycle {n} · built\n- Task: t{n}\n{EVIDENCE}"
                    "- Result: r\n" for n in range(4, 14))
    text += "\n## 2026-12-04 21:00 UTC · cycle 14 · built\n- Task: from a slow laptop\n- Result: r\n"
    memrepo.commit_files({"LOG.md": text}, "history, with a slow clock's entry last")
    done = cli(["close", "--date", "2026-12-05", "--no-llm"], cwd=memrepo.path)
    assert done.code == ExitCode.OK, done.out + done.err
    assert "closed 2026-12-05 again" in done.out and "since its close at 2026-12-05 23:47 UTC" in done.out, done.out


def _no_build_day(evidence: str = "") -> str:
    """The close of 2026-12-04, cycle 1 built on 2026-12-05, then cycles 2-9 that day built nothing (a Rule 0
    streak of 8)."""
    text = "\n## 2026-12-04 23:47 UTC · close\n- Day: 2026-12-04\n- Cycles: none\n"
    text += "\n## 2026-12-05 08:00 UTC · cycle 1 · built\n- Task: t1\n- Result: r\n"
    return text + "".join(f"\n## 2026-12-05 {8 + n}:00 UTC · cycle {n} · no-build\n- Task: t{n}\n{evidence}"
                          f"- Result: no build: waiting on the release token\n" for n in range(2, 10))


def test_a_session_entry_from_a_slow_clock_after_the_streak_does_not_cut_it_short(memrepo: GitRepo, cli) -> None:
    # A session on a laptop hours slow built something after cycle 9: the streak ended at 9, it is 2-9, not the
    # few cycles above the session's entry in the last block of LOG read.
    text = memrepo.read("LOG.md") + _no_build_day(EVIDENCE)
    text += ("\n## 2026-12-04 23:00 UTC · cycle 10 · built\n- Task: from a slow laptop\n- Result: r\n"
             "- Session: interactive\n")
    memrepo.commit_files({"LOG.md": text}, "a no-build day, then a slow clock's session")
    done = cli(["close", "--date", "2026-12-05", "--no-llm"], cwd=memrepo.path)
    assert done.code == ExitCode.OK, done.out + done.err
    assert "Rule 0: cycles 2–9 (8 in a row" in memrepo.read("LOG.md"), memrepo.read("LOG.md")[-3000:]


def test_a_no_build_session_from_a_slow_clock_continues_the_streak_it_follows(memrepo: GitRepo, cli) -> None:
    # docs/format.md: an interactive session is a cycle too, so its no-build entry is one more of the run. Its
    # slow clock dates it the day before the run began; the run still ended on 2026-12-05, in LOG's order.
    text = memrepo.read("LOG.md") + _no_build_day()
    text += ("\n## 2026-12-04 23:00 UTC · cycle 10 · no-build\n- Task: from a slow laptop\n"
             "- Result: no build: the token is still missing\n- Session: interactive\n")
    memrepo.commit_files({"LOG.md": text}, "a no-build day, then a slow clock's no-build session")
    done = cli(["close", "--date", "2026-12-05", "--no-llm"], cwd=memrepo.path)
    assert done.code == ExitCode.OK, done.out + done.err
    assert "Rule 0: cycles 2–10 (9 in a row" in memrepo.read("LOG.md"), memrepo.read("LOG.md")[-3000:]
