"""Which day a close closes, whatever time zone and however late, early, often or seldom the scheduler runs it.

The days are real days of the configured `timezone`, DST included, and the LOG entries carry their own offset.
A week of cycles and closes is driven with an injected clock through one real repository per zone: a close run
on time before its day ended (23:47), then a cycle at 23:55; a close run after midnight (00:31) and one 11-12 h
late; a day whose close never ran; a close run twice. Every cycle must be in exactly one report, and each day
closed by the close that belongs to it.
"""
from __future__ import annotations

from datetime import date, datetime, time, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from gitmem.close import CloseResult, run_close
from gitmem.memory import log
from gitmem.workspace import Workspace
from tests.support.helpers import make_repo
from tests.support.world import Clock, World


def _zoned(world: World, zone: str) -> None:
    world.git.write("gitmem.yaml", world.read("gitmem.yaml").replace("timezone: UTC", f"timezone: {zone}"))
    world.commit("time zone", "gitmem.yaml")
    world.reload()


def _scheduled(world: World, when: datetime) -> CloseResult:
    """The close as the schedule runs it: no --date, at `when`."""
    world.clock.moment = when
    world.reload()
    return run_close(Workspace.at(world.git.path, world.config), clock=world.clock)


def _by_hand(world: World, day: date, when: datetime) -> CloseResult:
    """`gitmem close --date DAY` at `when`."""
    world.clock.moment = when
    world.reload()
    return run_close(Workspace.at(world.git.path, world.config), day=day, clock=world.clock)


def _reports(text: str) -> list[tuple[str, list[int]]]:
    """(Day, the cycle numbers in its Done field) of every close entry of LOG, in LOG order."""
    return [(entry.get("Day") or "", [int(line.split(" · ")[0].removeprefix("cycle "))
                                      for line in (entry.get("Done") or "").splitlines()])
            for entry in log.parse(text).entries if entry.cycle is None]


def _each_cycle_once(world: World) -> None:
    reported = sorted(n for _, numbers in _reports(world.read("LOG.md")) for n in numbers)
    assert reported == list(range(1, world.last_cycle() + 1))


# (zone, the first day of the week): UTC, Madrid in summer (+02:00) and winter (+01:00), Madrid over the spring
# (29 March) and autumn (25 October) DST changes, and a zone west of UTC, in winter and over its 1 November change.
WEEKS = [("UTC", date(2026, 11, 9)), ("Europe/Madrid", date(2026, 7, 13)), ("Europe/Madrid", date(2026, 1, 12)),
         ("Europe/Madrid", date(2026, 3, 27)), ("Europe/Madrid", date(2026, 10, 23)),
         ("America/Los_Angeles", date(2026, 1, 12)), ("America/Los_Angeles", date(2026, 10, 30))]


@pytest.mark.parametrize(("zone", "first"), WEEKS, ids=[f"{z}-{d}" for z, d in WEEKS])
def test_every_day_is_closed_by_its_own_close_and_every_cycle_is_in_one_report(world: World, zone: str,
                                                                              first: date) -> None:
    tz = ZoneInfo(zone)
    _zoned(world, zone)
    before = world.git.head()

    def at(day: int, hour: int, minute: int = 0) -> datetime:
        """Local wall time on the week's `day` (0 = its first day), in the configured zone."""
        return datetime.combine(first + timedelta(days=day), time(hour, minute), tz)

    def iso(day: int) -> str:
        return (first + timedelta(days=day)).isoformat()

    # Day 0: closed on time, before the day ended; a cycle at 23:55 comes after that close.
    world.cycle(at(0, 9))
    world.cycle(at(0, 15))
    on_time = _scheduled(world, at(0, 23, 47))
    assert on_time.days == [iso(0)] and on_time.message.startswith(f"closed {iso(0)}: 2 cycles")
    late_cycle = world.cycle(at(0, 23, 55))
    # Day 1: its close runs after midnight (00:31 on day 2), after a cycle at 00:10 on day 2.
    world.cycle(at(1, 9))
    world.cycle(at(2, 0, 10))
    after_midnight = _scheduled(world, at(2, 0, 31))
    assert after_midnight.days == [iso(1)]
    assert after_midnight.message.startswith(f"closed {iso(1)}: 2 cycles")        # 23:55 of day 0, and 09:00
    assert [n for day, n in _reports(world.read("LOG.md")) if day == iso(1)] == [[late_cycle, late_cycle + 1]]
    # Day 2: its close runs 11.5 h late, at 11:17 on day 3, after day 3's first cycle: day 2 only.
    world.cycle(at(2, 18))
    morning = world.cycle(at(3, 8))
    half_day_late = _scheduled(world, at(3, 11, 17))
    assert half_day_late.days == [iso(2)] and half_day_late.message.startswith(f"closed {iso(2)}: 2 cycles")
    # Day 3's close never runs; day 4's, on time, closes both, oldest first.
    world.cycle(at(4, 9))
    caught_up = _scheduled(world, at(4, 23, 47))
    assert caught_up.days == [iso(3), iso(4)]
    assert [r["Cycles"][:7] for r in caught_up.reports] == ["1 cycle", "1 cycle"]
    assert caught_up.reports[0]["Done"].startswith(f"cycle {morning} ·")
    # Day 5: closed on time, a cycle at 23:55, and the close runs a second time 10 h late: that run reports only
    # what the first did not, and the next close does not report it again.
    world.cycle(at(5, 12))
    assert _scheduled(world, at(5, 23, 47)).days == [iso(5)]
    after_close = world.cycle(at(5, 23, 55))
    twice = _scheduled(world, at(6, 10, 5))
    assert twice.days == [iso(5)] and twice.message.startswith(f"closed {iso(5)} again: 1 cycle")
    assert twice.report["Done"].startswith(f"cycle {after_close} ·")
    assert _scheduled(world, at(6, 10, 20)).status == "already-closed"
    world.cycle(at(6, 12))
    last = _scheduled(world, at(6, 23, 47))
    assert last.days == [iso(6)] and last.message.startswith(f"closed {iso(6)}: 1 cycle ")
    # By hand afterwards: every day is closed already, and nothing is reported twice.
    for day in range(7):
        assert _by_hand(world, first + timedelta(days=day), at(6, 23, 50)).status == "already-closed"
    _each_cycle_once(world)
    assert sorted({day for day, _ in _reports(world.read("LOG.md"))}) == [iso(n) for n in range(7)]
    world.assert_valid(before)


@pytest.mark.parametrize("zone", ["Europe/Madrid", "America/Los_Angeles", "Asia/Tokyo"])
def test_close_date_finds_the_days_cycles_in_their_own_offset(world: World, zone: str) -> None:
    """`close --date D` after a close of the day after (the old late close closed that one): D's cycles, which
    the first close never reported, are reported now; a day whose cycles an earlier report holds says where."""
    tz = ZoneInfo(zone)
    _zoned(world, zone)
    before = world.git.head()
    world.cycle(datetime(2026, 7, 15, 0, 30, tzinfo=tz))
    world.cycle(datetime(2026, 7, 15, 23, 30, tzinfo=tz))
    wrong = _by_hand(world, date(2026, 7, 16), datetime(2026, 7, 16, 0, 47, tzinfo=tz))
    assert wrong.message == "closed 2026-07-16: no cycles ran on 2026-07-16"
    right = _by_hand(world, date(2026, 7, 15), datetime(2026, 7, 16, 0, 50, tzinfo=tz))
    assert right.message.startswith("closed 2026-07-15: 2 cycles (2 built")
    assert _by_hand(world, date(2026, 7, 15), datetime(2026, 7, 16, 0, 55, tzinfo=tz)).status == "already-closed"
    # Day 17 closed, day 19 closed by hand (its report holds day 18's cycle), then day 18 by hand.
    world.cycle(datetime(2026, 7, 17, 12, 0, tzinfo=tz))
    _by_hand(world, date(2026, 7, 17), datetime(2026, 7, 17, 23, 0, tzinfo=tz))
    world.cycle(datetime(2026, 7, 18, 12, 0, tzinfo=tz))
    assert _by_hand(world, date(2026, 7, 19), datetime(2026, 7, 19, 23, 0, tzinfo=tz)).counts["built"] == 1
    behind = _by_hand(world, date(2026, 7, 18), datetime(2026, 7, 19, 23, 5, tzinfo=tz))
    assert behind.report["Cycles"] == ("no cycles to report: the 1 cycle(s) that ran on 2026-07-18 are in an "
                                       "earlier close's report")
    _each_cycle_once(world)
    world.assert_valid(before)


def test_a_first_close_catches_up_the_days_since_the_first_cycle(world: World) -> None:
    """The first close ever, run late: the day with cycles before it is closed, not left in no report."""
    world.cycle(datetime(2026, 11, 13, 9, 0, tzinfo=ZoneInfo("UTC")))
    world.cycle(datetime(2026, 11, 14, 9, 0, tzinfo=ZoneInfo("UTC")))
    result = _scheduled(world, datetime(2026, 11, 15, 0, 31, tzinfo=ZoneInfo("UTC")))
    assert result.days == ["2026-11-13", "2026-11-14"]
    assert result.message.startswith("closed 2026-11-14: 1 cycle ")
    _each_cycle_once(world)


def test_late_hours_is_the_setting_that_says_which_day_a_late_close_belongs_to(tmp_path: Path,
                                                                               git_env: None) -> None:
    world = World(make_repo(tmp_path / "repo"))
    world.git.write("gitmem.yaml", world.read("gitmem.yaml").replace(
        "  stale_decision_days: 3\n", "  stale_decision_days: 3\n  late_hours: 2\n"))
    world.commit("late_hours", "gitmem.yaml")
    world.cycle(datetime(2026, 11, 14, 9, 0, tzinfo=ZoneInfo("UTC")))
    world.cycle(datetime(2026, 11, 15, 2, 30, tzinfo=ZoneInfo("UTC")))
    result = _scheduled(world, datetime(2026, 11, 15, 3, 0, tzinfo=ZoneInfo("UTC")))    # 3 h after midnight
    assert result.days == ["2026-11-14", "2026-11-15"]
    assert [r["Cycles"][:7] for r in result.reports] == ["1 cycle", "1 cycle"]


def test_a_hand_close_of_an_old_day_does_not_make_the_next_close_redo_the_week(world: World) -> None:
    utc = ZoneInfo("UTC")
    for day in (10, 11, 12):
        world.cycle(datetime(2026, 11, day, 9, 0, tzinfo=utc))
        assert _scheduled(world, datetime(2026, 11, day, 23, 47, tzinfo=utc)).days == [f"2026-11-{day}"]
    old = _by_hand(world, date(2026, 11, 1), datetime(2026, 11, 12, 23, 50, tzinfo=utc))
    assert old.report["Cycles"] == "no cycles ran on 2026-11-01"
    world.cycle(datetime(2026, 11, 13, 9, 0, tzinfo=utc))
    assert _scheduled(world, datetime(2026, 11, 13, 23, 47, tzinfo=utc)).days == ["2026-11-13"]
    _each_cycle_once(world)


@pytest.mark.parametrize(("zone", "day"), [("Europe/Madrid", date(2026, 3, 29)), ("Europe/Madrid", date(2026, 10, 25)),
                                           ("America/Los_Angeles", date(2026, 11, 1))])
def test_close_date_on_a_dst_change_day_holds_the_whole_23_or_25_hours(world: World, zone: str, day: date) -> None:
    tz = ZoneInfo(zone)
    _zoned(world, zone)
    world.cycle(datetime.combine(day - timedelta(days=1), time(23, 50), tz))           # the day before
    world.cycle(datetime.combine(day, time(0, 10), tz))                                 # old offset
    world.cycle(datetime.combine(day, time(1, 30), tz).replace(fold=1))                 # around the change
    world.cycle(datetime.combine(day, time(23, 50), tz))                                # new offset
    world.cycle(datetime.combine(day + timedelta(days=1), time(0, 10), tz))             # the day after
    offsets = {e.when.moment.utcoffset() for e in log.parse(world.read("LOG.md")).entries[1:4]}
    assert len(offsets) == 2, offsets                                                    # the LOG holds both
    result = _by_hand(world, day, datetime.combine(day + timedelta(days=1), time(0, 20), tz))
    assert result.message.startswith(f"closed {day.isoformat()}: 3 cycles ")
    assert result.report["Done"].splitlines()[0].startswith("cycle 2 ·")


class _Running(Clock):
    """A clock that runs on: each reading is `step` later than the one before (a close that takes minutes)."""

    def __init__(self, moment: datetime, step: timedelta) -> None:
        super().__init__(moment)
        self.step = step

    def __call__(self) -> datetime:
        read, self.moment = self.moment, self.moment + self.step
        return read


@pytest.mark.parametrize("dated", [time(23, 55), time(23, 47)], ids=["after-the-close", "in-the-closes-minute"])
def test_a_cycle_the_close_did_not_report_is_in_the_next_close(world: World, dated: time) -> None:
    """A cycle above a day's close in LOG, dated after the moment that close reported up to, is in no report unless
    the next close reports it: a session whose clock ran some minutes fast (inside the allowance) wrote it before
    the 23:47 close, or a writer pushed it while the close ran; or it is dated in the very minute the close ran."""
    utc = ZoneInfo("UTC")
    world.cycle(datetime(2026, 11, 14, 10, 0, tzinfo=utc))
    world.cycle(datetime.combine(date(2026, 11, 14), dated, utc))
    first = _scheduled(world, datetime(2026, 11, 14, 23, 47, tzinfo=utc))
    world.cycle(datetime(2026, 11, 15, 9, 0, tzinfo=utc))
    second = _scheduled(world, datetime(2026, 11, 15, 23, 47, tzinfo=utc))
    assert (first.days, second.days) == (["2026-11-14"], ["2026-11-15"])
    _each_cycle_once(world)


def test_a_close_is_dated_when_it_began_so_its_entry_says_what_it_reported_up_to(world: World) -> None:
    """A close with a model runs for minutes: its entry, plan and promotions are dated by the moment it read LOG at,
    the moment its report runs up to, not by when they were written."""
    utc = ZoneInfo("UTC")
    world.cycle(datetime(2026, 11, 14, 10, 0, tzinfo=utc))
    started = datetime(2026, 11, 14, 23, 47, 30, tzinfo=utc)
    run_close(Workspace.at(world.git.path, world.config), clock=_Running(started, timedelta(minutes=1)))
    closes = [e for e in log.parse(world.read("LOG.md")).entries if e.cycle is None]
    assert [str(e.when) for e in closes] == ["2026-11-14 23:47 UTC"]
