"""Hostile inputs, class 5: history across merges and pushes.

`verify` judges a merge against every parent: what any parent appended or resolved survives, and entries that
both parents appended in an order the LOG rules cannot keep get GM308 with the way out. `cycle --push` and
`close --push` verify what they fetch against the upstream they knew and never build on a rewrite (exit 5, the
work on a branch, origin and the local branch untouched). Real bare origins, several clones.
"""
from __future__ import annotations

from pathlib import Path

import pygit2
import pytest

from gitmem.cycle.runner import Settings, run_cycle
from gitmem.errors import ExitCode
from gitmem.memory import log
from tests.support.builders import (
    LOG_BASE,
    decisions_md,
    lesson,
    lessons_md,
    log_entry,
    pending,
    resolved,
    rules_md,
)
from tests.support.cycle_support import WritingBackend, built, clone, file_at, origin_and_clone
from tests.support.gitcli import git
from tests.support.helpers import AGENT, DANA, HUMAN, GitRepo
from tests.support.hostile import refused

L, D, LE, R = "LOG.md", "DECISIONS.md", "LESSONS.md", "RULES.md"


# -- merges ------------------------------------------------------------------------------------------------

def _branch(repo: GitRepo, name: str, at: str) -> None:
    repo.repo.branches.local.create(name, repo.repo.get(at).peel(pygit2.Commit), force=True)


def _checkout(repo: GitRepo, name: str) -> None:
    git(repo.path, "checkout", "--quiet", name)


def _merge(repo: GitRepo, files: dict[str, str | None], *others: str, author: tuple[str, str] = HUMAN) -> str:
    """A merge commit of HEAD and `others` whose tree is HEAD's with `files` written (None deletes)."""
    repo.stage_files(files)
    index = repo.repo.index
    index.read()
    tree = index.write_tree()
    signature = pygit2.Signature(author[0], author[1], 1_764_500_000, 0)
    parents = [repo.repo.head.target, *(repo.repo.revparse_single(o).peel(pygit2.Commit).id for o in others)]
    return str(repo.repo.create_commit("HEAD", signature, signature, "merge", tree, parents))


def _diverge(repo: GitRepo, base: dict[str, str], main: dict[str, str], side: dict[str, str],
             side_author: tuple[str, str] = HUMAN) -> str:
    """base on main; `side` committed on branch side; `main` committed on main. Returns the base commit."""
    repo.commit_files(base, "base")
    start = repo.head()
    _branch(repo, "side", start)
    _checkout(repo, "side")
    repo.commit_files(side, "on side", author=side_author)
    _checkout(repo, "main")
    if main:
        repo.commit_files(main, "on main")
    return start


def _verify(cli, repo: GitRepo, start: str):
    return cli(["verify", "--range", f"{start}..HEAD"], cwd=repo.path)


ENTRY_2, ENTRY_3, ENTRY_4 = log_entry(10, 2), log_entry(11, 3), log_entry(12, 4)


def test_merge_ours_dropping_the_other_parents_log_entry_is_refused(memrepo: GitRepo, cli) -> None:
    start = _diverge(memrepo, {L: LOG_BASE}, {}, {L: LOG_BASE + ENTRY_2})
    git(memrepo.path, "merge", "--quiet", "-s", "ours", "side", "-m", "merge -s ours")
    result = refused(_verify(cli, memrepo, start), 1)
    assert "GM301 the merge drops the LOG entry `2026-11-30 10:00 UTC · cycle 2 · built`" in result.out


def test_merge_ours_dropping_the_humans_answer_is_refused(memrepo: GitRepo, cli) -> None:
    start = _diverge(memrepo, {D: decisions_md(pending(1))}, {}, {D: decisions_md(resolved=resolved(1))})
    git(memrepo.path, "merge", "--quiet", "-s", "ours", "side", "-m", "merge -s ours")
    result = refused(_verify(cli, memrepo, start), 1)
    assert "GM205" in result.out and "has it)" in result.out


def test_merge_dropping_a_lesson_or_a_rule_from_the_other_parent_is_refused(memrepo: GitRepo, cli) -> None:
    start = _diverge(memrepo, {LE: lessons_md(lesson(1)), R: rules_md()}, {},
                     {LE: lessons_md(lesson(1), lesson(2)), R: rules_md("- R-01 · Read the clock (human)\n"
                                                                        "- R-02 · Test first (human)\n")})
    _merge(memrepo, {}, "side")
    result = refused(_verify(cli, memrepo, start), 1)
    assert "GM405" in result.out and "GM505" in result.out


def test_merge_keeping_both_parents_entries_in_order_passes(memrepo: GitRepo, cli) -> None:
    start = _diverge(memrepo, {L: LOG_BASE}, {L: LOG_BASE + ENTRY_2}, {L: LOG_BASE + ENTRY_3})
    _merge(memrepo, {L: LOG_BASE + ENTRY_2 + ENTRY_3}, "side")
    assert _verify(cli, memrepo, start).code == 0


def test_merge_where_both_parents_logged_the_same_cycle_names_the_way_out(memrepo: GitRepo, cli) -> None:
    theirs = log_entry(11, 2).replace("write tests", "their work")
    start = _diverge(memrepo, {L: LOG_BASE}, {L: LOG_BASE + ENTRY_2}, {L: LOG_BASE + theirs})
    _merge(memrepo, {L: LOG_BASE + ENTRY_2 + theirs}, "side")
    result = refused(_verify(cli, memrepo, start), 1)
    assert "GM308" in result.out and "rebase" in result.out and "cycle numbers after 2" in result.out


def test_merge_in_the_wrong_direction_is_told_to_merge_the_other_way(memrepo: GitRepo, cli) -> None:
    later = log_entry(12, 3)
    start = _diverge(memrepo, {L: LOG_BASE}, {L: LOG_BASE + later}, {L: LOG_BASE + ENTRY_2})
    _merge(memrepo, {L: LOG_BASE + later + ENTRY_2}, "side")
    result = refused(_verify(cli, memrepo, start), 1)
    assert "GM308" in result.out and "merge the other way round" in result.out


def test_octopus_merge_checks_every_parent(memrepo: GitRepo, cli) -> None:
    memrepo.commit_files({L: LOG_BASE}, "base")
    start = memrepo.head()
    for name, entry in (("a", ENTRY_2), ("b", ENTRY_3)):
        _branch(memrepo, name, start)
        _checkout(memrepo, name)
        memrepo.commit_files({L: LOG_BASE + entry}, f"on {name}")
    _checkout(memrepo, "main")
    _merge(memrepo, {L: LOG_BASE + ENTRY_2}, "a", "b")
    result = refused(_verify(cli, memrepo, start), 1)
    assert "cycle 3 · built` that parent" in result.out


def test_an_agent_merging_a_humans_answer_is_not_resolving_it(memrepo: GitRepo, cli) -> None:
    start = _diverge(memrepo, {D: decisions_md(pending(1))}, {}, {D: decisions_md(resolved=resolved(1))})
    _merge(memrepo, {D: decisions_md(resolved=resolved(1))}, "side", author=AGENT)
    assert _verify(cli, memrepo, start).code == 0


def test_an_evil_merge_by_the_agent_that_resolves_is_refused(memrepo: GitRepo, cli) -> None:
    start = _diverge(memrepo, {D: decisions_md(pending(1) + pending(2))}, {},
                     {D: decisions_md(pending(2), resolved(1))})
    _merge(memrepo, {D: decisions_md(resolved=resolved(2) + resolved(1))}, "side", author=AGENT)
    result = refused(_verify(cli, memrepo, start), 1)
    assert "GM207" in result.out and "D-0002" in result.out


def test_a_fenced_heading_does_not_confuse_the_merge_check(memrepo: GitRepo, cli) -> None:
    fenced = ENTRY_2.replace("- Result: 40 tests pass\n",
                             "- Result: 40 tests pass\n```\n## 2026-11-30 11:00 UTC · cycle 3 · built\n```\n")
    start = _diverge(memrepo, {L: LOG_BASE}, {L: LOG_BASE + fenced}, {L: LOG_BASE + fenced + ENTRY_3})
    _merge(memrepo, {L: LOG_BASE + fenced}, "side")
    assert "cycle 3 · built` that parent" in refused(_verify(cli, memrepo, start), 1).out


# -- pushes ------------------------------------------------------------------------------------------------

def _force_push_rewritten_log(origin: Path, tmp_path: Path, edit) -> GitRepo:
    human = clone(origin, tmp_path / "dana", DANA)
    human.write(L, edit(human.read(L)))
    human.stage(L)
    human.repo.amend_commit(human.repo.head.peel(pygit2.Commit), "HEAD", tree=human.repo.index.write_tree())
    git(human.path, "push", "--quiet", "--force", "origin", "main")
    return human


def _origin_main(origin: Path) -> str:
    return str(pygit2.Repository(str(origin)).references["refs/heads/main"].target)


@pytest.fixture
def published(tmp_path: Path, memrepo: GitRepo) -> tuple[Path, GitRepo]:
    origin = origin_and_clone(tmp_path, memrepo)
    first = run_cycle(memrepo.ws(), WritingBackend(built("first")), settings=Settings(push=True, sleep=lambda s: 0))
    assert first.pushed
    return origin, memrepo


def test_cycle_push_refuses_a_force_pushed_upstream(tmp_path: Path, published) -> None:
    origin, memrepo = published
    _force_push_rewritten_log(origin, tmp_path, lambda text: text.replace("- Task: first", "- Task: forged"))
    rewritten, local = _origin_main(origin), memrepo.head()
    report = run_cycle(memrepo.ws(), WritingBackend(built("second", {"two.txt": "2\n"})),
                       settings=Settings(push=True, sleep=lambda s: 0))
    assert report.exit_code == ExitCode.REWRITTEN == 5 and not report.pushed
    assert _origin_main(origin) == rewritten                       # nothing was pushed onto the rewrite
    assert report.side_branch == "gitmem/cycle-2"
    saved = pygit2.Repository(str(origin)).references["refs/heads/gitmem/cycle-2"].target
    assert str(saved) == memrepo.head() != local                   # the work is on the side branch, on origin too
    assert file_at(memrepo.repo, "gitmem/cycle-2", "two.txt") == "2\n"
    assert "- Task: first" in file_at(memrepo.repo, "main", L)      # local history untouched
    assert any("was rewritten since this checkout last saw it" in m for m in report.messages)
    assert any("A human decides" in m for m in report.messages)
    assert [v.code for v in report.violations][-1] == "GM715"
    # The remote-tracking branch is put back: the next cycle refuses again until a human decides.
    again = run_cycle(memrepo.ws(), WritingBackend(built("third", {"three.txt": "3\n"})),
                      settings=Settings(push=True, sleep=lambda s: 0))
    assert again.exit_code == ExitCode.REWRITTEN and _origin_main(origin) == rewritten


def test_an_agent_moving_the_remote_tracking_branch_changes_nothing(tmp_path: Path, published) -> None:
    origin, memrepo = published
    _force_push_rewritten_log(origin, tmp_path, lambda text: text.replace("- Task: first", "- Task: forged"))
    rewritten = _origin_main(origin)

    def fetch_the_rewrite_first(memory, request) -> None:
        git(memrepo.path, "fetch", "--quiet", "origin")             # the agent pre-trusts the rewritten tip
        built("second", {"two.txt": "2\n"})(memory, request)

    report = run_cycle(memrepo.ws(), WritingBackend(fetch_the_rewrite_first),
                       settings=Settings(push=True, sleep=lambda s: 0))
    assert report.exit_code == ExitCode.REWRITTEN and _origin_main(origin) == rewritten


def test_cycle_push_refuses_an_upstream_commit_that_rewrites_log(tmp_path: Path, published) -> None:
    origin, memrepo = published
    human = clone(origin, tmp_path / "dana", DANA)
    human.commit_files({L: human.read(L).replace("- Task: first", "- Task: edited")}, "edit history", author=DANA)
    git(human.path, "push", "--quiet", "origin", "main")
    report = run_cycle(memrepo.ws(), WritingBackend(built("second", {"two.txt": "2\n"})),
                       settings=Settings(push=True, sleep=lambda s: 0))
    assert report.exit_code == ExitCode.REWRITTEN
    assert any("GM301" in m for m in report.messages)
    assert _origin_main(origin) == human.head()


def test_cycle_push_refuses_an_upstream_that_drops_an_answer(tmp_path: Path, published) -> None:
    origin, memrepo = published
    human = clone(origin, tmp_path / "dana", DANA)
    human.commit_files({D: decisions_md(resolved=resolved(1))}, "answer", author=DANA)
    git(human.path, "push", "--quiet", "origin", "main")
    pulled = run_cycle(memrepo.ws(), WritingBackend(built("second", {"two.txt": "2\n"})),
                       settings=Settings(push=True, sleep=lambda s: 0))
    assert pulled.exit_code == ExitCode.OK
    git(human.path, "pull", "--quiet", "--ff-only")
    human.commit_files({D: decisions_md()}, "tidy up", author=DANA)
    git(human.path, "push", "--quiet", "origin", "main")
    report = run_cycle(memrepo.ws(), WritingBackend(built("third", {"three.txt": "3\n"})),
                       settings=Settings(push=True, sleep=lambda s: 0))
    assert report.exit_code == ExitCode.REWRITTEN and any("GM206" in m for m in report.messages)


def test_cycle_push_still_builds_on_an_honest_upstream(tmp_path: Path, published) -> None:
    origin, memrepo = published
    human = clone(origin, tmp_path / "dana", DANA)
    human.commit_files({"notes.txt": "mine\n"}, "notes", author=DANA)
    git(human.path, "push", "--quiet", "origin", "main")
    report = run_cycle(memrepo.ws(), WritingBackend(built("second", {"two.txt": "2\n"})),
                       settings=Settings(push=True, sleep=lambda s: 0))
    assert report.exit_code == ExitCode.OK and report.pushed
    assert [e.cycle for e in log.parse(file_at(pygit2.Repository(str(origin)), "refs/heads/main", L)).cycles] \
        == [1, 2]


def test_cycle_cli_exits_5_on_a_rewritten_upstream(tmp_path: Path, published, cli) -> None:
    origin, memrepo = published
    _force_push_rewritten_log(origin, tmp_path, lambda text: text + "\n## 2026-11-30 23:00 UTC · close\n- Day: x\n")
    memrepo.write("gitmem.yaml", memrepo.read("gitmem.yaml").replace(
        "  model: claude-sonnet-5-5\n", "  model: claude-sonnet-5-5\n  backend: scripted\n  script: s.yaml\n"))
    memrepo.write("s.yaml", "cycles:\n  - - {tool: log_add, task: t, outcome: no-build, result: nothing to do}\n")
    memrepo.stage("gitmem.yaml", "s.yaml")
    memrepo.commit("use the scripted agent")
    git(memrepo.path, "push", "--quiet", "origin", "HEAD:refs/heads/setup")
    result = cli(["cycle", "--push"], cwd=memrepo.path)
    refused(result, 5)
    assert "rewritten" in result.out + result.err and "Traceback" not in result.err


def test_close_push_refuses_a_rewritten_upstream(tmp_path: Path, published, cli) -> None:
    origin, memrepo = published
    _force_push_rewritten_log(origin, tmp_path, lambda text: text.replace("- Task: first", "- Task: forged"))
    rewritten = _origin_main(origin)
    today = log.parse(memrepo.read(L)).cycles[-1].when.day.isoformat()
    result = refused(cli(["close", "--push", "--no-llm", "--date", today], cwd=memrepo.path), ExitCode.REWRITTEN)
    assert "was rewritten since this checkout last saw it" in result.err
    assert _origin_main(origin) == rewritten
    assert "gitmem/close-" in result.err
