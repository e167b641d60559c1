"""Dates on the command line: one parser (gitmem.memory.dates) behind every date option, so a bad date is the
same usage error (exit 2) in the same words whichever command was given it. Before, `report --since`, `close
--date` and `recall --since` each parsed their own way and said three different things."""
from __future__ import annotations

from datetime import date, datetime

import pytest

from gitmem.memory import dates
from gitmem.recall import RecallError, search
from gitmem.workspace import Workspace

NOT_A_DAY = "is not a YYYY-MM-DD date"
NOT_A_DAY_OR_TIME = "is not a YYYY-MM-DD date or YYYY-MM-DD HH:MM time"

BAD_DATES = [
    (["report", "--since", "yesterday"], "--since", f"'yesterday' {NOT_A_DAY}"),
    (["report", "--until", "2026-11-31"], "--until", f"'2026-11-31' {NOT_A_DAY}"),
    (["report", "--since", "0001-01-01"], "--since",
     "'0001-01-01' is out of range: give a day from 1970-01-01 to 2199-12-31"),
    (["close", "--date", "yesterday"], "--date", f"'yesterday' {NOT_A_DAY}"),
    (["close", "--date", "2026-02-30"], "--date", f"'2026-02-30' {NOT_A_DAY}"),
    (["recall", "deploy", "--since", "yesterday"], "--since", f"'yesterday' {NOT_A_DAY_OR_TIME}"),
    (["recall", "deploy", "--until", "2026-11-30 25:00"], "--until", f"'2026-11-30 25:00' {NOT_A_DAY_OR_TIME}"),
]


@pytest.mark.parametrize(("argv", "option", "why"), BAD_DATES, ids=[" ".join(c[0]) for c in BAD_DATES])
def test_a_bad_date_is_one_usage_error_in_one_wording(memrepo, cli, argv: list[str], option: str,
                                                      why: str) -> None:
    """report said "is not a date like 2026-11-30", close "Invalid value for --date" (no quotes, unlike every
    other option), recall "is not a date; use ..." as a plain error after opening the workspace."""
    result = cli(argv, cwd=memrepo.path)
    assert result.code == 2, result.err
    lines = [line for line in result.err.splitlines() if line]
    assert lines[0] == f"Usage: gitmem {argv[0]} [OPTIONS]{' QUERY...' if argv[0] == 'recall' else ''}"
    assert lines[-1] == f"gitmem: Invalid value for '{option}': {why}"
    assert result.out == ""


def test_a_bad_date_is_refused_before_any_repository_is_opened(tmp_path, cli) -> None:
    """recall read its dates inside the search, so outside a repository it complained of the repository
    first; now each command reads its arguments first, as report and close did."""
    for argv in (["recall", "x", "--since", "nope"], ["close", "--date", "nope"], ["report", "--since", "nope"]):
        result = cli(argv, cwd=tmp_path)
        assert result.code == 2
        assert result.err.splitlines()[-1].endswith(f"'nope' {NOT_A_DAY_OR_TIME if argv[0] == 'recall' else NOT_A_DAY}")


def test_good_dates_still_pass_every_command(memrepo, cli) -> None:
    assert cli(["report", "--since", "2026-11-01", "--until", "2026-11-30", "--out", "-"], cwd=memrepo.path).code == 0
    assert cli(["recall", "deploy", "--since", "2026-11-01", "--until", "2026-11-30 18:00"], cwd=memrepo.path).code == 0
    assert cli(["recall", "deploy", "--until", "2026-11-30T18:00Z"], cwd=memrepo.path).code == 0


def test_surrounding_spaces_are_read_by_every_command_as_recall_did(memrepo, cli) -> None:
    """The copies disagreed: recall stripped spaces around a date, report and close refused " 2026-11-30".
    The one parser strips them everywhere (recall's copy won)."""
    result = cli(["report", "--until", " 2026-11-30 ", "--out", "-"], cwd=memrepo.path)
    assert result.code == 0, result.err
    assert dates.parse_day(" 2026-11-30 ") == date(2026, 11, 30)


def test_the_parser_reads_days_and_moments() -> None:
    assert dates.parse_day("2026-11-30") == date(2026, 11, 30)
    assert dates.parse_day_or_time("2026-11-30") == date(2026, 11, 30)
    assert dates.parse_day_or_time("2026-11-30 18:05") == datetime(2026, 11, 30, 18, 5)
    assert dates.parse_day_or_time("2026-11-30T18:05") == datetime(2026, 11, 30, 18, 5)
    with pytest.raises(dates.NotADate, match=f"^'2026-11' {NOT_A_DAY}$"):
        dates.parse_day("2026-11")
    with pytest.raises(dates.NotADate, match="out of range: give a day from 2000-01-01 to 2000-12-31$"):
        dates.parse_day("2001-01-01", date(2000, 1, 1), date(2000, 12, 31))
    assert dates.NotADate("x").exit_code == 2


def test_the_library_search_refuses_a_bad_date_in_the_same_words(memrepo) -> None:
    """search() takes strings too (for callers other than the CLI); its refusal is the CLI's wording."""
    with pytest.raises(RecallError, match=f"^'last week' {NOT_A_DAY_OR_TIME}$"):
        search(Workspace.at(memrepo.path), "deploy", since="last week")
