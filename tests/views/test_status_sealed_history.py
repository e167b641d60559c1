"""`status` (and each agent's row in `gitmem fleet status`) after a seal (rules 6) moved the last close, or the start
of a Rule 0 streak, out of LOG.md into a volume: both are read back into the sealed history, as readers of all
history read it. A runner that cycles often (every 10 minutes is 144 a day) seals its last close away within two
days of missed closes."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta

from gitmem.close import run_close
from gitmem.config import load_config
from gitmem.cycle.runner import Settings, run_cycle
from gitmem.errors import ExitCode
from gitmem.memory import log
from gitmem.memory.timestamps import Timestamp
from gitmem.views.status import collect_status
from gitmem.workspace import Workspace
from tests.support.cycle_support import WritingBackend
from tests.support.helpers import GitRepo
from tests.support.long_log import log_bytes
from tests.support.world import Clock

FIRST_DAY_CLOSE = datetime(2026, 1, 1, 23, 47, tzinfo=UTC)
AFTER = datetime(2026, 1, 2, 0, 30, tzinfo=UTC)          # the first cycle after that close, then one every 30 min


def _entry(cycle: int, outcome: str) -> str:
    when = Timestamp.from_datetime(AFTER + timedelta(minutes=30 * (cycle - 15)))
    fields = {"Task": f"task {cycle}", "Result": f"r {cycle}" if outcome == "built" else "no work"}
    return "\n" + log.make_entry(when, cycle=cycle, outcome=outcome, fields=fields).render() + "\n"


def _sealed_after_a_close(memrepo: GitRepo, outcome: str) -> Workspace:
    """14 cycles and their day's close, then cycles 15..399 of `outcome`, and a runner's cycle (no-build) that
    seals: volume 1 takes the oldest 200 entries, the close among them."""
    memrepo.commit_files({"LOG.md": log_bytes(memrepo.read("LOG.md"), 14).decode()}, "14 cycles")
    run_close(Workspace.at(memrepo.path, load_config(memrepo.path)), clock=Clock(FIRST_DAY_CLOSE))
    memrepo.commit_files({"LOG.md": memrepo.read("LOG.md") + "".join(_entry(n, outcome) for n in range(15, 400))},
                         "cycles 15-399")
    report = run_cycle(memrepo.ws(), WritingBackend(lambda memory, request: None),
                       settings=Settings(clock=Clock(AFTER + timedelta(days=9)), sleep=lambda s: None))
    assert report.exit_code == ExitCode.OK and report.outcome == "no-build"
    assert (memrepo.path / "history" / "LOG-0001.md").is_file()
    assert "· close" not in memrepo.read("LOG.md") and "- Day: 2026-01-01" not in memrepo.read("LOG.md")
    return Workspace.at(memrepo.path, load_config(memrepo.path))


def test_the_last_close_sealed_into_a_volume_is_still_the_last_close(memrepo: GitRepo) -> None:
    ws = _sealed_after_a_close(memrepo, "built")
    data = collect_status(ws, clock=Clock(AFTER + timedelta(days=9, minutes=5))).to_json()
    assert data["last_close"] == "2026-01-01"


def test_a_rule_0_streak_that_began_before_log_md_starts_is_counted_whole(memrepo: GitRepo) -> None:
    ws = _sealed_after_a_close(memrepo, "no-build")
    streak = collect_status(ws, clock=Clock(AFTER + timedelta(days=9, minutes=5))).to_json()["streak"]
    assert (streak["length"], streak["first"], streak["last"]) == (386, 15, 400)
