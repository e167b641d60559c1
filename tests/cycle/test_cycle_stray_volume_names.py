"""A project's own file named like a LOG volume (`history/LOG-0005.md`, committed before rules 6) is no volume:
the volumes are the run 1, 2, 3, ... seals write (gitmem.memory.volumes.numbered). The runner seals from 1 beside
it, never reads it as history, and never seals the run up to it; `check` refuses a seal that would take it in."""
from __future__ import annotations

from collections.abc import Callable

from gitmem.cycle.runner import Settings, run_cycle
from gitmem.errors import ExitCode
from gitmem.memory import volumes
from gitmem.workspace import log_history
from tests.support.cycle_support import WritingBackend, built, file_at, is_clean
from tests.support.helpers import CliResult, GitRepo
from tests.support.hostile import FixedClock
from tests.support.long_log import entry_count, with_history

OWN = "history/LOG-0005.md"
OWN_TEXT = "# LOG of the project's 2019 migration\n\n## step 1\n- Task: not an agent's entry\n"


def _with_own_file(repo: GitRepo, entries: int) -> None:
    repo.commit_files({OWN: OWN_TEXT}, "the project's own history notes")
    with_history(repo, entries=entries, blocks=3)


def _cycle(repo: GitRepo) -> None:
    report = run_cycle(repo.ws(), WritingBackend(built()), settings=Settings(clock=FixedClock()))
    assert report.exit_code == ExitCode.OK, report.error


def test_the_first_seal_beside_a_projects_own_volume_named_file_is_volume_1_and_never_reads_it(
        memrepo: GitRepo) -> None:
    _with_own_file(memrepo, 399)
    _cycle(memrepo)
    held = log_history.tracked(memrepo.handle, "LOG.md")
    assert [(v.number, v.path) for v in held] == [(1, "history/LOG-0001.md")]
    assert memrepo.read(OWN) == OWN_TEXT and is_clean(memrepo)
    history = log_history.of(memrepo.ws())
    assert [e.cycle for e in history.live_tail(lambda entries: False)[0]] == list(range(1, 401))


def test_the_runner_never_seals_the_volumes_up_to_a_file_it_did_not_write(memrepo: GitRepo) -> None:
    """999 entries and a cycle's make 4 volumes due: volume 5 after them would be the project's file."""
    _with_own_file(memrepo, 999)
    _cycle(memrepo)
    assert log_history.tracked(memrepo.handle, "LOG.md") == ()
    assert entry_count((memrepo.path / "LOG.md").read_bytes()) == 1000 and memrepo.read(OWN) == OWN_TEXT
    assert is_clean(memrepo)


Cli = Callable[..., CliResult]


def test_a_seal_that_takes_in_a_file_no_seal_wrote_is_gm315(memrepo: GitRepo, cli: Cli) -> None:
    stray = volumes.volume_path("LOG.md", 2)
    memrepo.commit_files({stray: OWN_TEXT}, "the project's own notes")
    with_history(memrepo, entries=400, blocks=3)
    seal = volumes.plan((memrepo.path / "LOG.md").read_bytes(), "LOG.md", 1)
    assert seal is not None and len(seal.volumes) == 1
    memrepo.stage_files({"LOG.md": seal.live, volumes.volume_path("LOG.md", 1): seal.volumes[0][1]})
    result = cli(["check"], cwd=memrepo.path)
    assert result.code == 1 and f"{stray}:1: GM315 LOG volume 2 would be {stray}, which was there before" in result.out
    # The project's own file, past a gap, is its own to change: no volume, so no GM314.
    memrepo.stage_files({"LOG.md": (file_at(memrepo.repo, "HEAD", "LOG.md") or "").encode(),
                         volumes.volume_path("LOG.md", 1): None,
                         stray: OWN_TEXT + "- Result: edited\n"})
    edited = cli(["check"], cwd=memrepo.path)
    assert edited.code == 0, edited.out
