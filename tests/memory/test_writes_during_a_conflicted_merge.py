"""Two writers: a human's `git merge` (or `git pull`) stopped on a conflict in a memory file, and a session's agent
keeps writing memory. A write into a file git holds unmerged would put a new block or entry above git's conflict
markers, which then read as a block's or entry's own lines, and resolving the conflict by either side would lose
it. Every writer (MemoryWriter: the CLI's memory commands and the MCP tools) refuses while one of the memory files
is unmerged, naming it, and writes again once the merge is resolved; `gitmem check` says the file is unmerged,
not missing."""
from __future__ import annotations

from gitmem.errors import ExitCode
from gitmem.memory import now
from tests.support.gitcli import git, isolated_env, run_git
from tests.support.helpers import DANA, GitRepo

NOW_ADD = ["now", "add", "--did", "d", "--human", "nothing", "--next", "n"]
LOG_ADD = ["log", "add", "--task", "t", "--outcome", "built", "--result", "r"]
ASK = ["decision", "ask", "--title", "Ship it?", "--recommendation", "yes"]


def _conflicted_now(repo: GitRepo, cli) -> bytes:
    """NOW's top block changed on `side` and on main alike: `git merge side` stops with NOW.md unmerged."""
    assert cli(LOG_ADD, cwd=repo.path).code == ExitCode.OK
    assert cli(NOW_ADD, cwd=repo.path).code == ExitCode.OK
    git(repo.path, "commit", "--quiet", "-am", "session 1", who=DANA)
    git(repo.path, "switch", "--quiet", "-c", "side", who=DANA)
    for branch, words in (("side", "as the side wants"), ("main", "as main wants")):
        git(repo.path, "switch", "--quiet", branch, who=DANA)
        repo.write("NOW.md", repo.read("NOW.md").replace("- Next: n", f"- Next: {words}", 1))
        git(repo.path, "commit", "--quiet", "-am", words, who=DANA)
    merged = run_git(repo.path, "merge", "side", env=isolated_env(who=DANA), check=False)
    assert merged.returncode != 0 and "<<<<<<<" in repo.read("NOW.md")
    return (repo.path / "NOW.md").read_bytes()


def test_no_memory_write_lands_while_a_memory_file_is_unmerged(memrepo: GitRepo, cli) -> None:
    conflicted = _conflicted_now(memrepo, cli)
    log_before, decisions_before = memrepo.read("LOG.md"), memrepo.read("DECISIONS.md")
    for argv in (NOW_ADD, LOG_ADD, ASK):
        done = cli(argv, cwd=memrepo.path)
        assert done.code == ExitCode.VIOLATIONS, (argv, done.out, done.err)
        assert "NOW.md" in done.err and "merge" in done.err
    assert (memrepo.path / "NOW.md").read_bytes() == conflicted
    assert (memrepo.read("LOG.md"), memrepo.read("DECISIONS.md")) == (log_before, decisions_before)


def test_once_the_merge_is_resolved_the_writes_go_on(memrepo: GitRepo, cli) -> None:
    _conflicted_now(memrepo, cli)
    git(memrepo.path, "checkout", "--quiet", "--ours", "NOW.md", who=DANA)
    git(memrepo.path, "add", "NOW.md", who=DANA)
    assert cli(LOG_ADD, cwd=memrepo.path).code == ExitCode.OK
    assert cli(NOW_ADD, cwd=memrepo.path).code == ExitCode.OK
    assert [b.cycle for b in now.parse(memrepo.read("NOW.md")).blocks][:2] == [2, 1]


def test_check_names_a_memory_file_git_holds_unmerged_as_unmerged_not_missing(memrepo: GitRepo, cli) -> None:
    """`gitmem check` in the middle of that merge: the index holds NOW.md only as the conflict's sides, and check
    said `GM904 memory file NOW.md is missing` with the hint to run `gitmem init` (which changes nothing)."""
    _conflicted_now(memrepo, cli)
    done = cli(["check"], cwd=memrepo.path)
    assert done.code == ExitCode.VIOLATIONS
    assert "NOW.md:1: GM904 memory file NOW.md is unmerged" in done.out, done.out
    assert "gitmem init" not in done.out and "git add" in done.out


def test_the_refusal_is_gm723_at_the_first_conflict_marker(memrepo: GitRepo, cli) -> None:
    """It had no code: now `NOW.md:LINE: GM723 …` at the line of git's first `<<<<<<<`, on stderr and in --json."""
    import json

    conflicted = _conflicted_now(memrepo, cli)
    marker = conflicted.split(b"\n").index(next(line for line in conflicted.split(b"\n")
                                                if line.startswith(b"<<<<<<<"))) + 1
    done = cli(LOG_ADD, cwd=memrepo.path)
    assert done.code == ExitCode.VIOLATIONS
    assert done.err.splitlines()[1:] == [
        f"NOW.md:{marker}: GM723 git stopped a merge on a conflict in NOW.md: a write now would land among its "
        "conflict markers [memory-write-unmerged] (hint: resolve the conflict and `git add NOW.md` (or "
        "`git merge --abort`), then write again)"], done.err
    answer = json.loads(cli([*LOG_ADD, "--json"], cwd=memrepo.path).out)
    assert (answer["code"], answer["exit_code"]) == ("GM723", 1)
    assert [(v["path"], v["line"]) for v in answer["violations"]] == [("NOW.md", marker)]
    assert marker > 1
