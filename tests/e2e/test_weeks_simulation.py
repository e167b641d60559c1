"""Weeks of two writers drawn from seeds (tests/support/weeks.py): whatever the draw, what must hold holds.

Three draws run in CI; `GITMEM_WEEKS_SEEDS=0-49 GITMEM_WEEKS_DAYS=14` runs more (marked slow).
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support.helpers import isolate_git_env
from tests.support.weeks import Weeks

# (seed, days, amendments): a UTC runner with a laptop 4h47 fast; New York, 31 minutes fast, over the night its
# clocks go back; a week in Kolkata where two malformed LOG headings reach main, each refused and amended.
CI_RUNS = ((6, 3, 0), (7, 4, 0), (65, 7, 2))


def _seeds() -> list[int]:
    spec = os.environ.get("GITMEM_WEEKS_SEEDS", "")
    if "-" in spec:
        low, high = spec.split("-")
        return list(range(int(low), int(high) + 1))
    return [int(s) for s in spec.split(",") if s]


def _run(tmp_path: Path, seed: int, days: int) -> Weeks:
    with pytest.MonkeyPatch.context() as patch:
        isolate_git_env(patch)
        weeks = Weeks(tmp_path, seed, days, patch).run()
        weeks.final_checks()
    return weeks


@pytest.mark.parametrize(("seed", "days", "amendments"), CI_RUNS)
def test_days_of_two_writers_keep_every_promise(tmp_path: Path, seed: int, days: int, amendments: int) -> None:
    weeks = _run(tmp_path, seed, days)
    refused = [r for r in weeks.refusals if r.startswith("cycle")]
    assert len(weeks.runner_cycles) == days * 8 - len(refused)
    assert weeks.amendments == amendments


@pytest.mark.slow
@pytest.mark.parametrize("seed", _seeds())
def test_many_weeks_of_two_writers_keep_every_promise(tmp_path: Path, seed: int) -> None:
    weeks = _run(tmp_path, seed, int(os.environ.get("GITMEM_WEEKS_DAYS", "14")))
    assert len(weeks.runner_cycles) >= 8
