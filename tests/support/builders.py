"""Small valid memory files, built in code, that a test then breaks in one place."""
from __future__ import annotations

from tests.support.helpers import HUMAN

TS = "2026-11-30 {:02d}:00 UTC"


def now_md(*blocks: str) -> str:
    return "# NOW\n" + "".join("\n" + b for b in blocks)


def now_block(hour: int, cycle: int, extra: int = 0) -> str:
    body = "- Did: built the parser\n- Human: nothing asked\n- Next: write tests\n"
    body += "".join(f"- Note {n}: more\n" for n in range(extra))
    return f"## {TS.format(hour)} · cycle {cycle}\n{body}"


def decisions_md(pending: str = "", resolved: str = "") -> str:
    return "# DECISIONS\n\n## Pending\n" + pending + "\n## Resolved\n" + resolved


def pending(num: int = 1, *, recommendation: bool = True) -> str:
    text = f"\n### D-{num:04d} · Pick a name\n- Asked: 2026-11-30 09:00 UTC (cycle 1)\n- Context: we need one\n"
    return text + ("- Recommendation: gitmem\n" if recommendation else "")


def resolved(num: int = 1, *, answer: str = "gitmem it is", answered: bool = True) -> str:
    text = pending(num) + f"- Answer: {answer}\n"
    return text + (f"- Answered: 2026-11-30 12:00 UTC by {HUMAN[0]} <{HUMAN[1]}>\n" if answered else "")


LOG_BASE = f"# LOG\n\n## {TS.format(9)} · cycle 1 · built\n- Task: set up\n- Result: repo ready\n"


def log_entry(hour: int, cycle: int, outcome: str = "built", *, task: bool = True, result: bool = True) -> str:
    text = f"\n## {TS.format(hour)} · cycle {cycle} · {outcome}\n"
    text += "- Task: write tests\n" if task else ""
    return text + ("- Result: 40 tests pass\n" if result else "")


def lessons_md(*items: str) -> str:
    return "# LESSONS\n" + "".join("\n" + item for item in items)


def lesson(num: int = 1, *, why: bool = True, confirmed: str = "", status: str = "open") -> str:
    text = f"## L-{num:04d} · Guessed the time\n- Happened: 2026-11-30 (cycle 3) — dates drifted\n"
    text += "- Why: no clock was read\n" if why else ""
    return text + "- Change: read the clock\n" + confirmed + f"- Status: {status}\n"


def rules_md(proven: str = "- R-01 · Read the clock (human)\n", retired: str = "", preamble: str = "") -> str:
    head = "# RULES\n\nWho I am: a test agent.\n" + preamble
    return head + "\n## Proven rules\n" + proven + "\n## Retired\n" + retired


def filler_rules(lines: int) -> str:
    """A RULES file with exactly `lines` lines."""
    base = rules_md()
    count = base.count("\n")
    return rules_md(preamble="".join(f"- note {n}\n" for n in range(lines - count)))


def many_rules(count: int) -> str:
    return "".join(f"- R-{n:02d} · rule number {n} (human)\n" for n in range(1, count + 1))
