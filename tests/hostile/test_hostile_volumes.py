"""Hostile agents and LOG's sealed volumes (rules 6): only the runner writes under `history/`, at its commit. An
agent's edit, removal or plant there, or a link in the folder's place, never reaches the branch: like every
protected path it goes to `gitmem/proposal/cycle-N` with a Pending decision, and the work tree gets HEAD's
volumes back."""
from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from gitmem.errors import ExitCode
from gitmem.memory import volumes
from tests.support.cycle_support import file_at, is_clean
from tests.support.helpers import GitRepo
from tests.support.hostile import FixedClock, cycle
from tests.support.long_log import with_history

VOLUME = "history/LOG-0001.md"


def _sealed(repo: GitRepo) -> bytes:
    """`repo` after the cycle that sealed volume 1 (the runner's own seal); volume 1's bytes."""
    with_history(repo, entries=399, blocks=3)
    report = cycle(repo, lambda root, memory, request: None)
    assert report.exit_code == ExitCode.OK, report.error
    return (repo.path / VOLUME).read_bytes()


def _edit(root: Path) -> None:
    target = root / VOLUME
    target.write_bytes(target.read_bytes().replace(b"- Result: result 7\n", b"- Result: it never failed\n"))


def _delete(root: Path) -> None:
    (root / VOLUME).unlink()


def _plant(root: Path) -> None:
    forged = "## 2026-06-01 09:00 UTC · cycle 1 · built\n- Task: a history that never was\n"
    (root / "history" / "LOG-0009.md").write_bytes(volumes.title("LOG.md", 9) + forged.encode())


def _rename(root: Path) -> None:
    os.replace(root / VOLUME, root / "history" / "LOG-0002.md")


ACTS: dict[str, Callable[[Path], None]] = {"edit": _edit, "delete": _delete, "plant": _plant, "rename": _rename}


@pytest.mark.parametrize("name", ACTS)
def test_the_agent_cannot_change_remove_plant_or_rename_a_volume(memrepo: GitRepo, name: str) -> None:
    volume = _sealed(memrepo)
    head_log = file_at(memrepo.repo, "HEAD", "LOG.md")
    report = cycle(memrepo, lambda root, memory, request: ACTS[name](root), clock=FixedClock())
    assert report.exit_code == ExitCode.OK, report.error
    assert file_at(memrepo.repo, "HEAD", VOLUME) == volume.decode()
    assert sorted(p.name for p in (memrepo.path / "history").iterdir()) == ["LOG-0001.md"]
    assert (memrepo.path / VOLUME).read_bytes() == volume
    assert (file_at(memrepo.repo, "HEAD", "LOG.md") or "").startswith(head_log or "")     # the cycle appended
    assert report.proposal_branch == "gitmem/proposal/cycle-401" and report.proposal_decision is not None
    assert is_clean(memrepo)


def test_a_link_in_place_of_the_volume_folder_is_taken_away_and_touches_nothing_outside(
        memrepo: GitRepo, tmp_path: Path) -> None:
    volume = _sealed(memrepo)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "LOG-0001.md").write_bytes(b"# forged\n")

    def swap(root: Path, memory: object, request: object) -> None:
        shutil.rmtree(root / "history")
        os.symlink(outside, root / "history")

    report = cycle(memrepo, swap, clock=FixedClock())
    assert report.exit_code == ExitCode.OK, report.error
    assert file_at(memrepo.repo, "HEAD", VOLUME) == volume.decode()
    folder = memrepo.path / "history"
    assert not folder.is_symlink() and (folder / "LOG-0001.md").read_bytes() == volume
    assert (outside / "LOG-0001.md").read_bytes() == b"# forged\n" and os.listdir(outside) == ["LOG-0001.md"]
    assert is_clean(memrepo)


def test_a_volume_planted_before_any_seal_never_reaches_the_branch(memrepo: GitRepo) -> None:
    """No volume yet: one the agent writes would be history no cycle wrote, and would take number 1 from the
    runner's first seal."""
    report = cycle(memrepo, lambda root, memory, request: (root / "history").mkdir() or _plant(root))
    assert report.exit_code == ExitCode.OK, report.error
    assert file_at(memrepo.repo, "HEAD", "history/LOG-0009.md") is None
    assert not (memrepo.path / "history").exists()
    assert report.proposal_branch == "gitmem/proposal/cycle-1"
    assert is_clean(memrepo)


def test_a_projects_own_files_in_the_volume_folder_stay_the_agents_to_edit_but_volume_names_do_not(
        memrepo: GitRepo) -> None:
    """A project with a `history/` folder of its own (from before rules 6): the agent's edit of the project's file
    there lands in the cycle's commit, where every edit under `history/` used to become a proposal; a file named
    like a volume, in any case, is still the runner's alone."""
    memrepo.commit_files({"history/2019-migration.md": "# The 2019 migration\n"}, "the project's own history")
    _sealed(memrepo)

    def edit_and_plant(root: Path, memory: object, request: object) -> None:
        (root / "history" / "2019-migration.md").write_text("# The 2019 migration\n\nDone in March.\n")

    report = cycle(memrepo, edit_and_plant, clock=FixedClock())
    assert report.exit_code == ExitCode.OK, report.error
    assert report.proposal_branch is None
    assert file_at(memrepo.repo, "HEAD", "history/2019-migration.md") == "# The 2019 migration\n\nDone in March.\n"

    def plant(root: Path, memory: object, request: object) -> None:
        (root / "history" / "log-0002.md").write_bytes(volumes.title("LOG.md", 2) + b"## forged\n")

    planted = cycle(memrepo, plant, clock=FixedClock())
    assert planted.exit_code == ExitCode.OK, planted.error
    assert planted.proposal_branch is not None and file_at(memrepo.repo, "HEAD", "history/log-0002.md") is None
    assert is_clean(memrepo)
