"""A seal (rules 6) is proven from the change alone: `check` and `verify` accept volumes that hold exactly the
oldest entries that left LOG.md, and refuse a volume changed, removed, skipped or holding anything else."""
from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from gitmem.memory import volumes
from tests.support.helpers import CliResult, GitRepo

Cli = Callable[..., CliResult]
START = datetime(2026, 6, 1, tzinfo=UTC)


def _entries(first: int, count: int) -> bytes:
    def when(n: int) -> str:
        return (START + timedelta(hours=3 * n)).strftime("%Y-%m-%d %H:%M UTC")

    return "".join(f"\n## {when(n)} · cycle {n} · built\n- Task: task {n}\n- Result: result {n}\n"
                   for n in range(first, first + count)).encode()


def _long_log(repo: GitRepo, count: int) -> bytes:
    """LOG.md with `count` entries, committed as history (by a human, as an old repository holds it)."""
    data = (repo.path / "LOG.md").read_bytes().rstrip(b"\n") + b"\n" + _entries(1, count)
    repo.commit_files({"LOG.md": data}, "a long history")
    return data


def _seal(repo: GitRepo, data: bytes, **plan: int) -> volumes.Seal:
    seal = volumes.plan(data, "LOG.md", 1, **plan)
    assert seal is not None
    repo.stage_files({"LOG.md": seal.live, **{volumes.volume_path("LOG.md", n): c for n, c in seal.volumes}})
    return seal


def _codes(result: CliResult) -> list[str]:
    return [line.split(": ")[1].split()[0] for line in result.out.splitlines() if ": GM" in line]


def test_a_seal_with_an_entry_appended_passes_check_and_verify(memrepo: GitRepo, cli: Cli) -> None:
    start = memrepo.head()
    data = _long_log(memrepo, 405)
    seal = _seal(memrepo, data + _entries(406, 1))
    assert len(seal.volumes) == 1
    result = cli(["check"], cwd=memrepo.path)
    assert result.code == 0, result.out + result.err
    memrepo.commit("cycle 406, and LOG sealed")
    verified = cli(["verify", "--range", f"{start}..HEAD"], cwd=memrepo.path)
    assert verified.code == 0, verified.out + verified.err


def test_a_changed_or_removed_volume_is_refused(memrepo: GitRepo, cli: Cli) -> None:
    data = _long_log(memrepo, 400)
    seal = _seal(memrepo, data)
    memrepo.commit("sealed")
    path = volumes.volume_path("LOG.md", 1)
    memrepo.stage_files({path: seal.volumes[0][1].replace(b"result 7\n", b"result seven\n")})
    assert _codes(cli(["check"], cwd=memrepo.path)) == ["GM314"]
    memrepo.stage_files({path: None})
    result = cli(["check"], cwd=memrepo.path)
    assert _codes(result) == ["GM314"] and "removed or renamed" in result.out


def test_volumes_that_prove_no_seal_are_refused(memrepo: GitRepo, cli: Cli) -> None:
    data = _long_log(memrepo, 400)
    seal = volumes.plan(data, "LOG.md", 1)
    assert seal is not None
    content = seal.volumes[0][1]
    # A volume that skips a number: it would become history when the numbers reached it.
    memrepo.stage_files({volumes.volume_path("LOG.md", 3): content.replace(b"volume 1", b"volume 3")})
    result = cli(["check"], cwd=memrepo.path)
    assert _codes(result) == ["GM315"] and "the next volume is 1" in result.out
    memrepo.stage_files({volumes.volume_path("LOG.md", 3): None})
    # A volume that copies entries LOG.md still holds.
    memrepo.stage_files({volumes.volume_path("LOG.md", 1): content})
    assert "still holds every entry" in cli(["check"], cwd=memrepo.path).out
    # A volume whose entries were edited on the way out.
    memrepo.stage_files({"LOG.md": seal.live, volumes.volume_path("LOG.md", 1): content.replace(b"task 9\n", b"x\n")})
    result = cli(["check"], cwd=memrepo.path)
    assert "GM315" in _codes(result) and "GM301" in _codes(result)


def test_a_seal_is_a_rewrite_under_the_rules_before_6(memrepo: GitRepo, cli: Cli, tmp_path: Path) -> None:
    """`verify` holds a commit made under rules 5 (its gitmem.yaml says 5, its message names no newer rules) to
    the rules of its time: LOG lost entries."""
    memrepo.commit_files({"gitmem.yaml": memrepo.read("gitmem.yaml").replace("rules_version: 6", "rules_version: 5")},
                         "back to the rules of 5")
    start = memrepo.head()
    data = _long_log(memrepo, 400)
    _seal(memrepo, data)
    memrepo.commit("sealed by hand under rules 5")
    result = cli(["verify", "--range", f"{start}..HEAD"], cwd=memrepo.path)
    assert result.code == 1 and "GM301" in _codes(result) and "GM315" not in _codes(result)


def test_a_proven_seal_with_its_kept_entries_rewritten_is_gm301(memrepo: GitRepo, cli: Cli) -> None:
    data = _long_log(memrepo, 400)
    seal = volumes.plan(data, "LOG.md", 1)
    assert seal is not None
    memrepo.stage_files({"LOG.md": seal.live.replace(b"- Task: task 399\n", b"- Task: another task\n"),
                         **{volumes.volume_path("LOG.md", n): c for n, c in seal.volumes}})
    result = cli(["check"], cwd=memrepo.path)
    assert _codes(result) == ["GM301"], result.out + result.err


def test_the_proof_of_a_seal_is_drawn_against_each_old_side_apart(memrepo: GitRepo) -> None:
    """A merge is judged against each parent in turn, against the same merged state: what was proven (or not)
    against one parent is not the answer against another."""
    from gitmem.checks.inputs import CheckInput
    from gitmem.checks.volume_checks import proven_base
    from gitmem.gitio import Snapshot

    data = _long_log(memrepo, 400)
    seal = volumes.plan(data, "LOG.md", 1)
    assert seal is not None
    new = Snapshot.from_dict("merged", {"LOG.md": seal.live,
                                        **{volumes.volume_path("LOG.md", n): c for n, c in seal.volumes}})
    config = memrepo.ws().config
    other = Snapshot.from_dict("other parent", {"LOG.md": b"# LOG\n"})
    first = Snapshot.from_dict("first parent", {"LOG.md": data})
    assert proven_base(CheckInput(config, other, new)) is None
    assert proven_base(CheckInput(config, first, new)) == seal.live


def test_a_squash_of_a_branch_that_sealed_entries_the_old_log_never_had_passes_check_and_verify(
        memrepo: GitRepo, cli: Cli) -> None:
    """A pull request's branch appended 250 cycles to a LOG of 150 and sealed the oldest 200 (50 of them its own);
    GitHub's squash merge makes that one commit. Its history (the volume unsealed, then LOG.md) appends to the old
    LOG.md, and is judged so; it was GM301 and GM315."""
    start = memrepo.head()
    data = _long_log(memrepo, 150)
    seal = _seal(memrepo, data + _entries(151, 250))
    assert len(seal.volumes) == 1
    result = cli(["check"], cwd=memrepo.path)
    assert result.code == 0, result.out + result.err
    memrepo.commit("squash of the memory pull request")
    verified = cli(["verify", "--range", f"{start}..HEAD"], cwd=memrepo.path)
    assert verified.code == 0, verified.out + verified.err


def test_a_squash_whose_sealed_entries_break_a_log_rule_is_refused_naming_it(memrepo: GitRepo, cli: Cli) -> None:
    """The entries a squash seals are judged like the ones LOG.md keeps: one without a Result is GM305."""
    data = _long_log(memrepo, 150)
    broken = _entries(151, 250).replace(b"- Result: result 170\n", b"", 1)
    _seal(memrepo, data + broken)
    result = cli(["check"], cwd=memrepo.path)
    assert result.code == 1 and _codes(result) == ["GM305"], result.out
    assert "cycle 170" in result.out


def test_a_squash_seals_history_is_unsealed_once_by_one_check(memrepo: GitRepo, cli: Cli,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The LOG rules and the volume rules both ask what history a squashed seal writes: one check unseals it
    once (each answer reads the whole history the seal moved)."""
    from tests.support.helpers import counting

    data = _long_log(memrepo, 150)
    _seal(memrepo, data + _entries(151, 250))
    unsealed = counting(monkeypatch, volumes, "unseal")
    result = cli(["check"], cwd=memrepo.path)
    assert result.code == 0 and len(unsealed) == 1, (result.out, len(unsealed))
