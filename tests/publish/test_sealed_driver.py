"""The merge driver `gitmem init` registers, where a side sealed LOG (rules 6): git merges the volumes itself and
hands the driver LOG.md alone. Real `git merge` and `git pull --rebase` against a bare origin, with the Action's
clone sealing while the human's clone writes."""
from __future__ import annotations

from pathlib import Path

from gitmem.memory import decisions, log, now, volumes
from tests.cycle.test_two_writers import session
from tests.publish.test_sealed_merges import VOLUME_1, entries, entry, sealed
from tests.support.cycle_support import clone, origin_and_clone
from tests.support.gitcli import git, isolated_env, run_git
from tests.support.helpers import DANA, GitRepo


def _with_driver(memrepo: GitRepo, count: int) -> str:
    """`gitmem init` (the driver registered, .gitattributes committed) and a LOG of `count` entries."""
    session(memrepo, "init")
    base = memrepo.read("LOG.md") + entries(1, count)
    memrepo.write("LOG.md", base)
    git(memrepo.path, "add", "-A", who=DANA)
    git(memrepo.path, "commit", "-q", "--no-verify", "-m", "history", who=DANA)
    return base


def _commit(repo: GitRepo, files: dict[str, str | bytes | None], message: str) -> None:
    for path, data in files.items():
        assert data is not None
        repo.write(path, data)
    git(repo.path, "add", "-A", who=DANA)
    git(repo.path, "commit", "-q", "--no-verify", "-m", message, who=DANA)


def _the_action_sealed(repo: GitRepo) -> tuple[str, str, dict[str, str | bytes | None]]:
    """A LOG of 399 entries on main, and a branch `action` whose cycle 400 sealed it (main checked out again):
    the base LOG, the commit before the branch, and the files the branch's cycle wrote."""
    base = _with_driver(repo, 399)
    start = repo.head()
    git(repo.path, "switch", "-q", "-c", "action", who=DANA)
    theirs = sealed(base + entry(400, "action"))
    _commit(repo, theirs, "gitmem: cycle 400")
    git(repo.path, "switch", "-q", "main", who=DANA)
    return base, start, theirs


def _verifies(repo: GitRepo, start: str) -> None:
    done = session(repo, "verify", "--range", f"{start}..HEAD", check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def _tasks(text: str) -> list[str]:
    return [e.body[0] for e in log.parse(text).entries]


def test_git_merge_of_a_branch_that_sealed_keeps_its_volume_and_both_sides_entries(memrepo: GitRepo) -> None:
    base, start, theirs = _the_action_sealed(memrepo)
    _commit(memrepo, {"LOG.md": base + entry(400, "human")}, "session")

    git(memrepo.path, "merge", "-q", "--no-edit", "action", who=DANA)
    assert memrepo.read(VOLUME_1).encode() == theirs[VOLUME_1]
    _verifies(memrepo, start)
    live = memrepo.read("LOG.md")
    assert [e.cycle for e in log.parse(live).entries] == list(range(201, 402))
    assert _tasks(live)[-2:] == ["- Task: human", "- Task: action"]      # the branch merged in follows ours
    whole = volumes.unseal(live.encode(), "LOG.md", [(1, theirs[VOLUME_1])])
    assert whole is not None and whole.decode().startswith(base + entry(400, "human"))


def test_git_pull_rebase_of_the_side_that_sealed_over_an_append(tmp_path: Path, memrepo: GitRepo) -> None:
    base = _with_driver(memrepo, 399)
    start = memrepo.head()
    origin = origin_and_clone(tmp_path, memrepo)
    human = clone(origin, tmp_path / "human")
    _commit(human, {"LOG.md": base + entry(400, "human")}, "session")
    git(human.path, "push", "-q", "origin", "main", who=DANA)
    mine = sealed(base + entry(400, "laptop cycle"))
    _commit(memrepo, mine, "gitmem: cycle 400")

    git(memrepo.path, "pull", "-q", "--rebase", "origin", "main", who=DANA)
    assert memrepo.read(VOLUME_1).encode() == mine[VOLUME_1]
    _verifies(memrepo, start)
    live = memrepo.read("LOG.md")
    assert [e.cycle for e in log.parse(live).entries] == list(range(201, 402))
    assert _tasks(live)[-2:] == ["- Task: human", "- Task: laptop cycle"]


def test_sides_that_sealed_different_entries_are_left_to_the_human_with_the_way_out(memrepo: GitRepo) -> None:
    base = _with_driver(memrepo, 150)
    git(memrepo.path, "switch", "-q", "-c", "action", who=DANA)
    for who in ("action", "human"):
        _commit(memrepo, {"LOG.md": base + entries(151, 250, who)}, f"{who}'s cycles")
        _commit(memrepo, sealed(base + entries(151, 250, who) + entry(401, who)), "gitmem: cycle 401")
        git(memrepo.path, "switch", "-q", "main", who=DANA)

    done = run_git(memrepo.path, "merge", "--no-edit", "action", env=isolated_env(who=DANA), check=False)
    assert done.returncode != 0
    said = done.stdout + done.stderr
    assert "LOG.md:1: GM319 a side sealed LOG entries into history/" in said
    assert "gitmem merge BRANCH" in said
    unmerged = run_git(memrepo.path, "diff", "--name-only", "--diff-filter=U").stdout.split()
    assert "LOG.md" in unmerged and VOLUME_1 in unmerged
    # Nothing is written among the markers; `gitmem merge` after an abort is the way out.
    assert session(memrepo, "log", "add", "--task", "t", "--outcome", "built", "--result", "r",
                   check=False).returncode != 0


def test_git_merge_where_both_sides_sealed_the_same_entries(memrepo: GitRepo) -> None:
    base, start, theirs = _the_action_sealed(memrepo)
    mine = sealed(base + entry(400, "human", hours=401))
    assert mine[VOLUME_1] == theirs[VOLUME_1]         # git's add/add of the same file is clean
    _commit(memrepo, mine, "gitmem: cycle 400")

    git(memrepo.path, "merge", "-q", "--no-edit", "action", who=DANA)
    live = memrepo.read("LOG.md")
    assert [e.cycle for e in log.parse(live).entries] == list(range(201, 402))
    assert _tasks(live)[-2:] == ["- Task: human", "- Task: action"]
    _verifies(memrepo, start)


def _cycle_by_cli(repo: GitRepo, who: str, *, seal: bool) -> None:
    """A cycle's memory written with the real CLI (LOG entry, NOW block, a decision asked), sealed as the runner
    seals when `seal`, and committed."""
    session(repo, "log", "add", "--task", who, "--outcome", "built", "--result", "done")
    session(repo, "now", "add", "--did", who, "--human", "nothing", "--next", "more")
    session(repo, "decision", "ask", "--title", f"{who}?", "--recommendation", "yes")
    if seal:
        _commit(repo, sealed(repo.read("LOG.md")), f"gitmem: {who}")
    else:
        _commit(repo, {}, f"session: {who}")


def test_git_merge_of_a_branch_that_sealed_renumbers_its_cycle_everywhere_it_is_named(memrepo: GitRepo) -> None:
    _with_driver(memrepo, 399)
    start = memrepo.head()
    git(memrepo.path, "switch", "-q", "-c", "action", who=DANA)
    _cycle_by_cli(memrepo, "action", seal=True)
    git(memrepo.path, "switch", "-q", "main", who=DANA)
    _cycle_by_cli(memrepo, "human", seal=False)

    git(memrepo.path, "merge", "-q", "--no-edit", "action", who=DANA)
    by_title = {d.title: d for d in decisions.parse(memrepo.read("DECISIONS.md")).all}
    assert (by_title["human?"].id, by_title["action?"].id) == ("D-0001", "D-0002")
    assert "(cycle 401)" in by_title["action?"].get("Asked")          # the cycle that asked it, renumbered
    assert [b.cycle for b in now.parse(memrepo.read("NOW.md")).blocks[:2]] == [401, 400]
    assert log.parse(memrepo.read("LOG.md")).entries[-1].cycle == 401
    _verifies(memrepo, start)


def test_a_rebase_replaying_a_seal_over_renumbered_cycles_says_gm319_and_gitmem_merge_joins_it(
        tmp_path: Path, memrepo: GitRepo) -> None:
    """The laptop's runner appended 249 cycles and then sealed; meanwhile a human's web edit on origin took cycle 151.
    `git pull --rebase` renumbers the laptop's cycles after the human's, then replays the seal, whose volume holds
    them under their old numbers: no LOG.md beside it is right. The driver says GM319 and the way out (it used to
    leave bare conflict markers), and `gitmem merge origin/main` after the abort joins both into one history."""
    base = _with_driver(memrepo, 150)
    start = memrepo.head()
    origin = origin_and_clone(tmp_path, memrepo)
    human = clone(origin, tmp_path / "human")
    _commit(human, {"LOG.md": base + entry(151, "human", hours=500)}, "web edit")
    git(human.path, "push", "-q", "origin", "main", who=DANA)
    _commit(memrepo, {"LOG.md": base + entries(151, 249, "laptop")}, "the laptop's cycles")
    _commit(memrepo, sealed(base + entries(151, 250, "laptop")), "gitmem: cycle 400")

    done = run_git(memrepo.path, "pull", "--rebase", "origin", "main", env=isolated_env(who=DANA), check=False)
    said = done.stdout + done.stderr
    assert done.returncode != 0 and "LOG.md:1: GM319 a side sealed LOG entries into history/" in said
    assert "gitmem merge origin/BRANCH" in said
    git(memrepo.path, "rebase", "--abort", who=DANA)
    session(memrepo, "merge", "origin/main")
    live = memrepo.read("LOG.md")
    assert _tasks(live)[-2:] == ["- Task: laptop 400", "- Task: human"]
    assert [e.cycle for e in log.parse(live).entries][-1] == 401
    _verifies(memrepo, start)
