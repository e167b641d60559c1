"""The daily close: report the day, flag its problems, plan tomorrow, promote proven lessons to rules.

`run_close` is the library entry point (the CLI, the demo and tests call it). The parts:
  day.py           reading the day from LOG, NOW and DECISIONS, newest end first; the Rule 0 streak
  backing.py       which Confirmed lines history backs (the commit that added one also logged its cycle)
  verdict_memo.py  those verdicts kept for the next close, outside the repository, while their inputs stand
  gates.py         the promotion gates and plan (pure: text in, decisions out)
  promotion.py     the live re-check and the one write of RULES and LESSONS; conflicts to DECISIONS
  day_report.py    the report and tomorrow's plan, from the data alone
  writeup.py       one day's write-up: its facts, Rule 0 streaks with their lessons, standing conditions, the plan
  llm.py           optional wording by `close.model` (rules, contradictions, prose); it decides nothing
  commit_guard.py  what the close may change, checked before its one commit; restore on failure
  compose.py       what the close writes: the days it closes, their reports and the plan, in memory
  run.py           the order of it all, the lock, the commit
  push_race.py     the push, and closing again when another close reached the remote first, on the close's branch
  overtaken.py     another close that reached the remote first: step aside, to close again on it
"""
from __future__ import annotations

from gitmem.close.commit_guard import CloseError
from gitmem.close.compose import CloseResult
from gitmem.close.run import run_close

__all__ = ["CloseError", "CloseResult", "run_close"]
