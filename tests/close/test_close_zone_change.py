"""Each cycle is in exactly one report, also when the human changes `timezone` between two closes (a new user
starts in the template's UTC and then sets their own zone). A close entry's Day is a day of the zone it was
written in, which its own stamp's offset shows: read in the new zone, the day it closed ends at another moment,
and the cycles it reported came up again in the next report."""
from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

from tests.support.world import World, at, d

LOS_ANGELES, TOKYO = "America/Los_Angeles", "Asia/Tokyo"


def zone(world: World, name: str) -> None:
    world.git.commit_files({"gitmem.yaml": world.read("gitmem.yaml").replace(
        f"timezone: {world.config.timezone}", f"timezone: {name}")}, f"timezone: {name}")
    world.reload()


def local(moment: datetime, name: str) -> datetime:
    """`moment` as the real clock gives it under `timezone: name` (gitmem.workspace.Workspace.clock)."""
    return moment.astimezone(ZoneInfo(name))


def done(report: dict[str, str]) -> str:
    return report.get("Done", "")


def test_a_cycle_reported_before_a_zone_change_is_not_reported_again(world: World) -> None:
    zone(world, LOS_ANGELES)
    world.cycle(local(at(7, 3), LOS_ANGELES))                      # 19:00 on the 6th in Los Angeles
    first = world.close(d(6), local(at(7, 4), LOS_ANGELES))        # 20:00 on the 6th there
    assert first.counts["built"] == 1 and "-08:00 · close" in world.read("LOG.md")
    zone(world, TOKYO)                                             # the same cycle is 12:00 on the 7th in Tokyo
    world.cycle(local(at(7, 5), TOKYO))                            # 14:00 on the 7th in Tokyo
    second = world.close(d(7), local(at(7, 14), TOKYO))            # 23:00 on the 7th there
    assert second.counts["built"] == 1, second.report
    assert "cycle 1 " not in done(second.report) and "cycle 2 " in done(second.report)


def test_a_zone_change_the_other_way_loses_no_cycle(world: World) -> None:
    zone(world, TOKYO)
    world.cycle(local(at(7, 5), TOKYO))                            # 14:00 on the 7th in Tokyo
    assert world.close(d(7), local(at(7, 14), TOKYO)).counts["built"] == 1
    zone(world, LOS_ANGELES)                                       # that close's day ended at 15:00 UTC
    world.cycle(local(at(7, 20), LOS_ANGELES))                     # 12:00 on the 7th in Los Angeles
    second = world.close(d(7), local(at(8, 6), LOS_ANGELES))       # 22:00 on the 7th there: its second close
    assert second.counts["built"] == 1, second.report
    assert "cycle 2 " in done(second.report) and "cycle 1 " not in done(second.report)
