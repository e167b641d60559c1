"""`gitmem report` over LOG's sealed volumes (rules 6, issue 31): the same report as from the unsealed LOG, reading
only the volumes a range reaches back into, newest first."""
from __future__ import annotations

from collections.abc import Iterator
from datetime import date, timedelta

import pytest

from gitmem import gitio
from gitmem.report.collect import collect_report
from gitmem.report.model import WorkspaceReport
from gitmem.workspace import Workspace, log_history
from tests.support import report_history as planted
from tests.support.helpers import GitRepo
from tests.support.sealing import seal

WINDOWS: tuple[date | None, ...] = (None, planted.FIRST_DAY + timedelta(days=9), planted.LAST_DAY - timedelta(days=13))


def report(git: GitRepo, since: date | None) -> WorkspaceReport:
    return collect_report(Workspace.at(git.path), since=since, clock=lambda: planted.NOW)


@pytest.fixture(scope="module")
def sealed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[GitRepo, dict[date | None, WorkspaceReport]]]:
    with planted.ninety_days(tmp_path_factory.mktemp("report")) as git:
        unsealed = {since: report(git, since) for since in WINDOWS}
        # The planted history's own closes may have sealed already (rules 6): this seal adds the next volumes.
        before = len(log_history.tracked(git.handle, "LOG.md"))
        written = seal(git, per_volume=100, seal_at=200)
        assert len(written) >= 2 and written[:-1] == [f"history/LOG-{n:04d}.md" for n in
                                                     range(before + 1, before + len(written))]
        yield git, unsealed


@pytest.mark.parametrize("since", WINDOWS[:2], ids=["whole", "reaching-into-volumes"])
def test_a_sealed_log_reports_as_the_unsealed_one(sealed: tuple[GitRepo, dict[date | None, WorkspaceReport]],
                                                  since: date | None) -> None:
    git, unsealed = sealed
    assert report(git, since) == unsealed[since]
    assert report(git, since).cycles                 # the comparison holds something


def test_a_range_reads_only_the_volumes_it_reaches_back_into(
        sealed: tuple[GitRepo, dict[date | None, WorkspaceReport]], monkeypatch: pytest.MonkeyPatch) -> None:
    git, unsealed = sealed
    read: list[int] = []
    real = log_history.LogHistory.volume_bytes

    def counting(self: log_history.LogHistory, volume: log_history.Volume) -> bytes:
        read.append(volume.number)
        return real(self, volume)

    monkeypatch.setattr(log_history.LogHistory, "volume_bytes", counting)
    assert report(git, WINDOWS[2]) == unsealed[WINDOWS[2]]         # the last 14 days: LOG.md alone
    assert read == []
    found = log_history.tracked(git.handle, "LOG.md")
    newest = found[-1]
    heading = next(line for line in gitio.blob(git.handle, newest.blob).decode().splitlines() if line.startswith("## "))
    inside = date.fromisoformat(heading[3:13]) + timedelta(days=1)      # a day the newest volume holds
    report(git, inside)
    assert read == [newest.number]
    read.clear()
    report(git, None)
    assert read == [volume.number for volume in reversed(found)] and len(read) >= 2
