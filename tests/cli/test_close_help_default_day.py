"""`gitmem close --help` is what a new user reads for the day a bare `gitmem close` closes. A close that starts
less than `close.late_hours` after midnight closes the day before (gitmem.close.day.close_day): the help says so,
where it said "today", which is wrong every morning."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.support.helpers import CliResult


def test_close_help_names_the_late_hours_rule_for_its_default_day(cli: Callable[..., CliResult],
                                                                  tmp_path: Path) -> None:
    shown = cli(["close", "--help"], cwd=tmp_path)
    assert shown.code == 0
    said = " ".join(shown.out.split())
    assert "close.late_hours" in said and "the day before" in said
