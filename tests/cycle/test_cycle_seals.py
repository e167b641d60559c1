"""The runner seals LOG and keeps NOW short (rules 6, gitmem.sealing): in the commit of the entry that made the
seal due, byte for byte, never half-written; on real repositories, judged by `verify`."""
from __future__ import annotations

from gitmem import gitio, sealing
from gitmem.agents.base import CycleRequest
from gitmem.checks.check_and_verify import verify_range
from gitmem.cycle.runner import CycleReport, Settings, run_cycle
from gitmem.errors import ExitCode
from gitmem.memory import now, volumes
from gitmem.memory_writer import MemoryWriter
from tests.support.cycle_support import Act, WritingBackend, built, is_clean
from tests.support.helpers import GitRepo
from tests.support.hostile import FixedClock
from tests.support.long_log import entry_count, with_history

CLOCK = FixedClock()       # 2026-12-01 09:00 UTC, after every cycle of the history


def run(repo: GitRepo, act: Act | None = None) -> CycleReport:
    return run_cycle(repo.ws(), WritingBackend(act or built()), settings=Settings(clock=CLOCK))


def head_paths(repo: GitRepo, commit: str) -> dict[str, bytes]:
    """The files `commit` changed against its parent, with their bytes."""
    found = repo.repo[commit]
    diff = repo.repo.diff(found.parents[0], found)
    return {d.delta.new_file.path: repo.repo[d.delta.new_file.id].data for d in diff
            if d.delta.status_char() != "D"}


def rejoined(before: bytes, sealed: list[tuple[int, bytes]], live: bytes) -> bytes:
    """History in order (rules 6): LOG.md's title and preamble, the volumes' entries by number, LOG.md's entries."""
    first = before.index(b"\n## ") + 1
    assert live[:first] == before[:first]
    return before[:first] + b"".join(data[len(volumes.title("LOG.md", n)):] for n, data in sealed) + live[first:]


def test_the_cycle_whose_entry_makes_400_seals_the_oldest_200_into_volume_1_in_its_own_commit(
        memrepo: GitRepo) -> None:
    with_history(memrepo, entries=399, blocks=20)
    start = memrepo.head()
    before = (memrepo.path / "LOG.md").read_bytes()
    report = run(memrepo)
    assert report.exit_code == ExitCode.OK, report.error
    changed = head_paths(memrepo, report.commit)
    volume = changed["history/LOG-0001.md"]
    live = changed["LOG.md"]
    assert entry_count(volume[len(volumes.title("LOG.md", 1)):]) == 200 and entry_count(live) == 200
    assert volume.startswith(volumes.title("LOG.md", 1) + b"## ") and "cycle 200 · built".encode() in volume
    # Byte for byte: LOG.md's head, the volume's entries, then what LOG.md kept, are the LOG the cycle wrote.
    whole = rejoined(before, [(1, volume)], live)
    assert whole.startswith(before) and whole[len(before):].startswith("\n## 2026-12-01 09:00 UTC · cycle 400".encode())
    assert is_clean(memrepo) and (memrepo.path / "history" / "LOG-0001.md").read_bytes() == volume
    result = verify_range(memrepo.ws(), start, "HEAD")
    assert (result.commits, result.violations) == (1, [])
    # The next cycle seals nothing: LOG.md holds 201 entries, and volume 1 stays as it is.
    again = run(memrepo)
    assert again.exit_code == ExitCode.OK, again.error
    assert set(head_paths(memrepo, again.commit)) == {"LOG.md", "NOW.md", "hello.txt"}
    assert gitio.head_files_under(memrepo.handle, "history") == ["history/LOG-0001.md"]


def test_now_keeps_its_newest_100_blocks_when_the_runner_writes_it(memrepo: GitRepo) -> None:
    with_history(memrepo, entries=120, blocks=120)
    report = run(memrepo)
    assert report.exit_code == ExitCode.OK, report.error
    blocks = now.parse(memrepo.read("NOW.md")).blocks
    assert len(blocks) == volumes.NOW_BLOCKS_KEPT
    assert [b.cycle for b in blocks[:2]] == [121, 120] and blocks[-1].cycle == 22
    assert "history/LOG-0001.md" not in head_paths(memrepo, report.commit)      # 121 entries: no seal
    assert is_clean(memrepo)


def test_an_old_long_log_seals_into_many_volumes_at_its_first_cycle(memrepo: GitRepo) -> None:
    with_history(memrepo, entries=2999, blocks=5)
    start = memrepo.head()
    before = (memrepo.path / "LOG.md").read_bytes()
    report = run(memrepo)
    assert report.exit_code == ExitCode.OK, report.error
    changed = head_paths(memrepo, report.commit)
    numbers = [n for n, _ in volumes.numbered("LOG.md", changed)]
    assert numbers == list(range(1, 15))          # 3,000 entries: 200 a volume until fewer than 400 stay
    assert entry_count(changed["LOG.md"]) == 200
    whole = rejoined(before, [(n, changed[volumes.volume_path("LOG.md", n)]) for n in numbers], changed["LOG.md"])
    assert whole.startswith(before) and entry_count(whole) == 3000
    assert is_clean(memrepo)
    result = verify_range(memrepo.ws(), start, "HEAD")
    assert (result.commits, result.violations) == (1, [])


def test_a_cycle_that_fails_after_the_seal_leaves_no_volume_and_seals_in_its_no_build_commit(
        memrepo: GitRepo) -> None:
    """The seal is written before the runner's validation; when that refuses the cycle, the seal is put back
    before the salvage: the salvage branch holds the agent's work only, no volume is left half-made in the work
    tree, the index is clean, and the no-build entry's commit (the 400th entry) seals."""
    with_history(memrepo, entries=399, blocks=5)

    def invalid(memory: MemoryWriter, request: CycleRequest) -> None:
        built()(memory, request)
        (request.root / "LESSONS.md").write_text("# LESSONS\n\n## L-1 · not a lesson heading\n", encoding="utf-8")

    report = run(memrepo, invalid)
    assert report.exit_code == ExitCode.SALVAGED, report.messages
    salvaged = gitio.resolve_revision(memrepo.handle, f"refs/heads/{report.salvage_branch}")
    kept = head_paths(memrepo, salvaged)          # the agent's work only, its LOG as it appended to it
    assert set(kept) == {"LESSONS.md", "hello.txt", "LOG.md", "NOW.md"} and entry_count(kept["LOG.md"]) == 400
    changed = head_paths(memrepo, report.commit)
    assert set(changed) == {"LOG.md", "NOW.md", "history/LOG-0001.md"}
    assert entry_count(changed["LOG.md"]) == 200 and "cycle 400 · no-build".encode() in changed["LOG.md"]
    assert is_clean(memrepo)


def test_a_file_where_a_new_volume_would_go_is_never_written_over(memrepo: GitRepo) -> None:
    """A volume is numbered from HEAD's tree, and written only where nothing is: a file the work tree holds there
    (a human's, untracked) stays as it is, and the seal waits, saying why."""
    with_history(memrepo, entries=400, blocks=3)
    memrepo.write("history/LOG-0001.md", "my own notes\n")
    before = (memrepo.path / "LOG.md").read_bytes()
    sealed = sealing.seal_worktree(memrepo.ws())
    assert sealed.paths == ()
    assert "history/LOG-0001.md is named like one of its volumes but no seal wrote it" in sealed.notes[0]
    assert memrepo.read("history/LOG-0001.md") == "my own notes\n"
    assert (memrepo.path / "LOG.md").read_bytes() == before
    (memrepo.path / "history" / "LOG-0001.md").unlink()
    sealed = sealing.seal_worktree(memrepo.ws())
    assert sealed.volumes == ("history/LOG-0001.md",) and entry_count((memrepo.path / "LOG.md").read_bytes()) == 200
    sealing.undo(memrepo.ws(), sealed)          # the commit did not happen: all of it put back
    assert (memrepo.path / "LOG.md").read_bytes() == before and not (memrepo.path / "history").exists()
