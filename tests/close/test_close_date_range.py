"""`gitmem close --date` reads its day as `report --since/--until` do (cli.common.DayParam): a day outside the
range any memory can hold is a usage error (exit 2) in the same words, not a traceback (0001-01-01 overflowed the
week before it) and not a close of a day before 1970 committed to LOG."""
from __future__ import annotations

import pytest

from gitmem.errors import ExitCode
from tests.support.helpers import GitRepo


@pytest.mark.parametrize("day", ["0001-01-01", "0001-01-07", "1900-01-01", "1969-12-31"])
def test_a_day_no_memory_can_hold_is_a_usage_error_and_nothing_is_written(memrepo: GitRepo, cli, day: str) -> None:
    head = memrepo.head()
    log_before = memrepo.read("LOG.md")
    done = cli(["close", "--no-llm", "--date", day], cwd=memrepo.path)
    assert done.code == ExitCode.USAGE, done.out + done.err
    assert f"'{day}' is out of range: give a day from 1970-01-01 to 2199-12-31" in done.err
    assert "Traceback" not in done.err
    assert memrepo.head() == head and memrepo.read("LOG.md") == log_before
    report = cli(["report", "--since", day], cwd=memrepo.path)
    assert report.code == ExitCode.USAGE and done.err.split("'--date'")[-1] == report.err.split("'--since'")[-1]
