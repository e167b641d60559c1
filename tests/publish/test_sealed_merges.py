"""Merges and rebases where a side sealed LOG into volumes (rules 6, gitmem.publish.sealed), on real repositories:
the laptop's cycle sealed at its 400th entry while the Action's appended, both sealed, both sealed different
entries, an amendment that moves."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from gitmem import gitio
from gitmem.checks.check_and_verify import verify_range
from gitmem.config import Config, load_config
from gitmem.memory import log, now, volumes
from gitmem.publish.merge import resolver_for
from gitmem.publish.push import publish
from gitmem.publish.renumber import renumberer_for
from gitmem.publish.sealed import SealedLog
from gitmem.workspace import Workspace
from tests.support.cycle_support import clone, file_at, origin_and_clone
from tests.support.gitcli import git as run_git
from tests.support.helpers import GitRepo

START = datetime(2026, 1, 1, tzinfo=UTC)
VOLUME_1 = volumes.volume_path("LOG.md", 1)
VOLUME_2 = volumes.volume_path("LOG.md", 2)


def entry(cycle: int, task: str = "", *, hours: int | None = None, amends: int | None = None) -> str:
    when = (START + timedelta(hours=cycle if hours is None else hours)).strftime("%Y-%m-%d %H:%M UTC")
    mark = f" · amends line {amends}" if amends is not None else ""
    return f"\n## {when}{mark} · cycle {cycle} · built\n- Task: {task or f't{cycle}'}\n- Result: r{cycle}\n"


def entries(first: int, count: int, task: str = "") -> str:
    return "".join(entry(n, task and f"{task} {n}") for n in range(first, first + count))


def sealed(text: str, next_number: int = 1) -> dict[str, str | bytes | None]:
    """The files a runner's commit writes for LOG `text` under rules 6: LOG.md and the volumes it seals."""
    seal = volumes.plan(text.encode(), "LOG.md", next_number)
    assert seal is not None
    return {"LOG.md": seal.live, **{volumes.volume_path("LOG.md", n): data for n, data in seal.volumes}}


def history(repo: GitRepo, rev: str = "HEAD") -> str:
    """LOG's whole history at `rev`: the volumes by number, then LOG.md."""
    names = gitio.head_files_under(repo.handle, "history") if rev == "HEAD" else []
    found = [(n, (file_at(repo.repo, rev, p) or "").encode()) for n, p in volumes.numbered("LOG.md", names)]
    text = volumes.unseal((file_at(repo.repo, rev, "LOG.md") or "").encode(), "LOG.md", found)
    assert text is not None
    return text.decode()


def setup(tmp_path: Path, memrepo: GitRepo, count: int) -> tuple[GitRepo, str]:
    """The laptop (`memrepo`) and the Action's clone of one origin whose LOG holds `count` entries."""
    base = memrepo.read("LOG.md") + entries(1, count)
    memrepo.commit_files({"LOG.md": base}, "history")
    origin = origin_and_clone(tmp_path, memrepo)
    return clone(origin, tmp_path / "action"), base


def push(repo: GitRepo) -> None:
    run_git(repo.path, "push", "--quiet", "origin", "main")


def rebase(repo: GitRepo) -> gitio.RebaseResult:
    run_git(repo.path, "fetch", "--quiet", "origin")
    config = Config()
    return gitio.rebase_onto(repo.handle, "refs/remotes/origin/main", resolver_for(config), renumberer_for(config),
                             SealedLog("LOG.md"))


def cycles(text: str) -> list[int | None]:
    return [e.cycle for e in log.parse(text).entries]


def test_a_rebase_onto_the_side_that_sealed_keeps_its_volume_and_appends_ours_after_its_entries(
        tmp_path: Path, memrepo: GitRepo) -> None:
    action, base = setup(tmp_path, memrepo, 399)
    action_files = sealed(base + entry(400, "action"))
    action.commit_files(action_files, "gitmem: cycle 400")
    push(action)
    memrepo.commit_files({"LOG.md": base + entry(400, "laptop")}, "laptop's session")

    result = rebase(memrepo)
    assert result.conflicts == () and result.head is not None
    assert file_at(memrepo.repo, "HEAD", VOLUME_1).encode() == action_files[VOLUME_1]     # never changes
    live = file_at(memrepo.repo, "HEAD", "LOG.md")
    assert live.startswith(action_files["LOG.md"].decode())         # the Action's LOG.md, then ours appended
    assert cycles(live) == list(range(201, 402))
    assert log.parse(live).entries[-1].body[0] == "- Task: laptop"
    assert history(memrepo) == base + entry(400, "action") + entry(400, "laptop").replace("cycle 400", "cycle 401")


def test_a_rebase_of_the_side_that_sealed_seals_the_same_volume_after_the_other_sides_entries(
        tmp_path: Path, memrepo: GitRepo) -> None:
    action, base = setup(tmp_path, memrepo, 399)
    action.commit_files({"LOG.md": base + entry(400, "action")}, "gitmem: cycle 400")
    push(action)
    mine = sealed(base + entry(400, "laptop"))
    memrepo.commit_files(mine, "gitmem: cycle 400")

    result = rebase(memrepo)
    assert result.conflicts == () and result.head is not None
    assert file_at(memrepo.repo, "HEAD", VOLUME_1).encode() == mine[VOLUME_1]
    live = file_at(memrepo.repo, "HEAD", "LOG.md")
    assert cycles(live) == list(range(201, 402))
    assert [e.body[0] for e in log.parse(live).entries[-2:]] == ["- Task: action", "- Task: laptop"]
    assert history(memrepo).startswith(base + entry(400, "action"))


def test_both_sides_sealed_the_same_entries_into_the_same_volume(tmp_path: Path, memrepo: GitRepo) -> None:
    action, base = setup(tmp_path, memrepo, 399)
    theirs = sealed(base + entry(400, "action"))
    action.commit_files(theirs, "gitmem: cycle 400")
    push(action)
    mine = sealed(base + entry(400, "laptop"))
    assert mine[VOLUME_1] == theirs[VOLUME_1]
    memrepo.commit_files(mine, "gitmem: cycle 400")

    assert rebase(memrepo).conflicts == ()
    assert file_at(memrepo.repo, "HEAD", VOLUME_1).encode() == theirs[VOLUME_1]
    assert gitio.head_files_under(memrepo.handle, "history") == [VOLUME_1]
    assert cycles(file_at(memrepo.repo, "HEAD", "LOG.md")) == list(range(201, 402))


def cycles_then_seal(repo: GitRepo, base: str, who: str) -> dict[str, str | bytes | None]:
    """A side's 250 cycles (one commit), then its next cycle, which seals 150 shared entries and 50 of its own."""
    text = base + entries(151, 250, who)
    repo.commit_files({"LOG.md": text}, f"{who}'s cycles")
    files = sealed(text + entry(401, f"{who} 401"))
    repo.commit_files(files, "gitmem: cycle 401")
    return files


def test_sides_that_sealed_different_entries_are_joined_and_sealed_once(tmp_path: Path, memrepo: GitRepo) -> None:
    # Each side had 150 shared entries and 250 of its own when it sealed: their volume 1 differ.
    action, base = setup(tmp_path, memrepo, 150)
    start = memrepo.head()
    theirs = cycles_then_seal(action, base, "action")
    push(action)
    mine = cycles_then_seal(memrepo, base, "laptop")
    assert mine[VOLUME_1] != theirs[VOLUME_1]

    result = rebase(memrepo)
    assert result.conflicts == () and result.head is not None
    assert file_at(memrepo.repo, "HEAD", VOLUME_1).encode() == theirs[VOLUME_1]      # the upstream's stays
    whole = history(memrepo)
    assert cycles(whole) == list(range(1, 653))          # every entry of both sides, ours renumbered after theirs
    assert [e.body[0] for e in log.parse(whole).entries[-1:]] == ["- Task: laptop 401"]
    assert gitio.head_files_under(memrepo.handle, "history") == [VOLUME_1, VOLUME_2]
    assert len(log.parse(file_at(memrepo.repo, "HEAD", "LOG.md")).entries) == 252   # sealed again: < SEAL_AT
    assert verified(memrepo, start) == []


def test_an_amendment_names_the_line_its_entry_stands_on_after_the_other_side_sealed(
        tmp_path: Path, memrepo: GitRepo) -> None:
    action, base = setup(tmp_path, memrepo, 399)
    # Cycle 300's heading is malformed in history; the laptop amends it while the Action seals.
    bad = entry(300)
    broken = base.replace(bad, bad.replace(" · built", " · built!"))
    memrepo.commit_files({"LOG.md": broken}, "a web edit")
    run_git(memrepo.path, "push", "--quiet", "origin", "main")
    run_git(action.path, "pull", "--quiet", "--ff-only")
    theirs = sealed(broken + entry(400, "action"))
    action.commit_files(theirs, "gitmem: cycle 400")
    push(action)
    line = broken.splitlines().index(bad.splitlines()[1].replace(" · built", " · built!")) + 1
    memrepo.commit_files({"LOG.md": broken + entry(400, "amended", amends=line)}, "amend cycle 300")

    assert rebase(memrepo).conflicts == ()
    live = file_at(memrepo.repo, "HEAD", "LOG.md")
    moved = live.splitlines().index(bad.splitlines()[1].replace(" · built", " · built!")) + 1
    assert moved < line
    assert log.parse(live).entries[-1].amends == moved


def test_a_merge_commit_of_a_branch_that_sealed(tmp_path: Path, memrepo: GitRepo) -> None:
    action, base = setup(tmp_path, memrepo, 399)
    theirs = sealed(base + entry(400, "action"))
    action.commit_files(theirs, "gitmem: cycle 400")
    push(action)
    memrepo.commit_files({"LOG.md": base + entry(400, "laptop")}, "laptop's session")
    run_git(memrepo.path, "fetch", "--quiet", "origin")
    config = Config()
    merged = gitio.merge_into(memrepo.handle, "HEAD", "refs/remotes/origin/main", "merge", gitio.Identity("D", "d@x"),
                              resolver_for(config, merging=True),
                              renumberer_for(config, log_too=False), SealedLog("LOG.md"))
    assert merged.conflicts == () and merged.commit is not None
    assert file_at(memrepo.repo, merged.commit, VOLUME_1).encode() == theirs[VOLUME_1]
    live = file_at(memrepo.repo, merged.commit, "LOG.md")
    assert cycles(live) == list(range(201, 402))
    assert [e.body[0] for e in log.parse(live).entries[-2:]] == ["- Task: laptop", "- Task: action"]


def block(cycle: int, did: str = "", *, minutes: int = 0) -> str:
    when = (START + timedelta(hours=cycle, minutes=minutes)).strftime("%Y-%m-%d %H:%M UTC")
    return f"\n## {when} · cycle {cycle}\n- Did: {did or f'd{cycle}'}\n- Human: nothing\n- Next: n\n"


def now_text(head: str, cycles: range, *, top: str = "") -> str:
    """NOW with a block for each of `cycles`, newest on top (after `top`, a new block)."""
    return head + top + "".join(block(n) for n in reversed(cycles))


def kept_newest(text: str) -> str:
    return volumes.keep_newest_blocks(text.encode(), volumes.NOW_BLOCKS_KEPT).decode()


def test_now_keeps_both_sides_new_blocks_and_no_more_than_either_side_keeps(tmp_path: Path, memrepo: GitRepo) -> None:
    head = memrepo.read("NOW.md")
    memrepo.commit_files({"NOW.md": now_text(head, range(1, volumes.NOW_BLOCKS_KEPT + 1))}, "a hundred blocks")
    origin = origin_and_clone(tmp_path, memrepo)
    action = clone(origin, tmp_path / "action")
    # Each side's runner put a block on top and left the oldest block (cycle 1) out.
    theirs = kept_newest(now_text(head, range(1, 101), top=block(101, "action")))
    action.commit_files({"NOW.md": theirs}, "gitmem: cycle 101")
    push(action)
    mine = kept_newest(now_text(head, range(1, 101), top=block(102, "laptop", minutes=5)))
    memrepo.commit_files({"NOW.md": mine}, "gitmem: cycle 101")

    assert rebase(memrepo).conflicts == ()
    merged = now.parse(file_at(memrepo.repo, "HEAD", "NOW.md"))
    assert not merged.problems
    assert len(merged.blocks) == volumes.NOW_BLOCKS_KEPT
    assert [(b.cycle, b.fields[0].value) for b in merged.blocks[:2]] == [(102, "laptop"), (101, "action")]
    assert {b.cycle for b in merged.blocks} == set(range(3, 103))      # the oldest kept block (2) left too
    assert 1 not in {b.cycle for b in merged.blocks}           # dropped by both: never back


def test_a_block_one_side_left_out_is_not_brought_back_by_the_other(tmp_path: Path, memrepo: GitRepo) -> None:
    head = memrepo.read("NOW.md")
    memrepo.commit_files({"NOW.md": now_text(head, range(1, 101))}, "a hundred blocks")
    origin = origin_and_clone(tmp_path, memrepo)
    action = clone(origin, tmp_path / "action")
    theirs = kept_newest(now_text(head, range(1, 101), top=block(101, "action")))
    action.commit_files({"NOW.md": theirs}, "gitmem: cycle 101")
    push(action)
    # A human's session adds a block without trimming: the Action's trim still holds.
    memrepo.commit_files({"NOW.md": now_text(head, range(1, 101), top=block(102, "session", minutes=5))}, "session")

    assert rebase(memrepo).conflicts == ()
    merged = now.parse(file_at(memrepo.repo, "HEAD", "NOW.md"))
    assert len(merged.blocks) == volumes.NOW_BLOCKS_KEPT and 1 not in {b.cycle for b in merged.blocks}
    assert [b.fields[0].value for b in merged.blocks[:2]] == ["session", "action"]


def verified(repo: GitRepo, start: str) -> list[str]:
    """`verify`'s errors from `start` to HEAD, as it prints them."""
    ws = Workspace.for_repo(repo.handle, load_config(repo.path))
    return [f"{v.path}:{v.line}: {v.code} {v.message}" for v in verify_range(ws, start, "HEAD").violations
            if v.is_error]


def test_the_runners_push_over_the_actions_seal_is_pushed_and_verifies(tmp_path: Path, memrepo: GitRepo) -> None:
    action, base = setup(tmp_path, memrepo, 399)
    start = memrepo.head()
    theirs = sealed(base + entry(400, "action"))
    action.commit_files(theirs, "gitmem: cycle 400")
    push(action)
    memrepo.commit_files({"LOG.md": base + entry(400, "laptop")}, "laptop's session")

    result = publish(memrepo.handle, conflict_branch="gitmem/cycle-400", sleep=lambda s: None)
    assert result.status == "pushed", result.messages
    assert file_at(memrepo.repo, "HEAD", VOLUME_1).encode() == theirs[VOLUME_1]
    assert cycles(file_at(memrepo.repo, "HEAD", "LOG.md"))[-1] == 401
    assert verified(memrepo, start) == []


def test_the_runners_push_of_its_own_seal_over_an_append_is_pushed_and_verifies(tmp_path: Path,
                                                                                memrepo: GitRepo) -> None:
    action, base = setup(tmp_path, memrepo, 399)
    start = memrepo.head()
    action.commit_files({"LOG.md": base + entry(400, "human")}, "a human's session, pushed first")
    push(action)
    mine = sealed(base + entry(400, "laptop"))
    memrepo.commit_files(mine, "gitmem: cycle 400")

    result = publish(memrepo.handle, conflict_branch="gitmem/cycle-400", sleep=lambda s: None)
    assert result.status == "pushed", result.messages
    assert file_at(memrepo.repo, "HEAD", VOLUME_1).encode() == mine[VOLUME_1]
    assert _tasks_of(file_at(memrepo.repo, "HEAD", "LOG.md"))[-2:] == ["- Task: human", "- Task: laptop"]
    assert verified(memrepo, start) == []


def test_gitmem_merge_of_sides_that_sealed_different_entries_verifies(tmp_path: Path, memrepo: GitRepo,
                                                                      cli) -> None:
    action, base = setup(tmp_path, memrepo, 150)
    start = memrepo.head()
    cycles_then_seal(action, base, "action")
    push(action)
    cycles_then_seal(memrepo, base, "laptop")
    run_git(memrepo.path, "fetch", "--quiet", "origin")

    merged = cli(["merge", "origin/main"], cwd=memrepo.path)
    assert merged.code == 0, merged.out + merged.err
    mine = file_at(memrepo.repo, "HEAD^1", VOLUME_1)
    assert file_at(memrepo.repo, "HEAD", VOLUME_1) == mine            # the current branch's volume stays
    whole = history(memrepo)
    assert cycles(whole) == list(range(1, 653))
    assert _tasks_of(whole)[-1] == "- Task: action 401"             # the branch merged in follows ours
    assert verified(memrepo, start) == []


def _tasks_of(text: str) -> list[str]:
    return [e.body[0] for e in log.parse(text).entries]


def test_gitmem_merge_of_a_branch_that_did_not_seal_into_ours_that_did_verifies(tmp_path: Path, memrepo: GitRepo,
                                                                                cli) -> None:
    action, base = setup(tmp_path, memrepo, 399)
    start = memrepo.head()
    action.commit_files({"LOG.md": base + entry(400, "branch")}, "a session on a branch")
    push(action)
    mine = sealed(base + entry(400, "laptop"))
    memrepo.commit_files(mine, "gitmem: cycle 400")
    run_git(memrepo.path, "fetch", "--quiet", "origin")

    merged = cli(["merge", "origin/main"], cwd=memrepo.path)
    assert merged.code == 0, merged.out + merged.err
    assert file_at(memrepo.repo, "HEAD", VOLUME_1).encode() == mine[VOLUME_1]
    assert _tasks_of(file_at(memrepo.repo, "HEAD", "LOG.md"))[-2:] == ["- Task: laptop", "- Task: branch"]
    assert verified(memrepo, start) == []
