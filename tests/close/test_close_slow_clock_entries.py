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
