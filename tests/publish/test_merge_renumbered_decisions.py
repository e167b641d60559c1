"""A decision ID is a position in the merged history: a decision asked (and answered) on a side branch while the
current branch asked one under the same ID is renamed by the merge, and keeps its answer under its new ID. `verify`
sees the renamed decision as the same one, not as an answer removed (GM205) or a new answer the merge made.
Real repositories and the real CLI: `gitmem merge`, `git merge` through the merge driver `gitmem init` registers,
and pull-request mode's catch-up of the base (the same `sidemerge.merged_commit`)."""
from __future__ import annotations

from pathlib import Path

from gitmem.checks.check_and_verify import verify_range
from gitmem.config import load_config
from gitmem.errors import ExitCode
from gitmem.gitio import open_repo
from gitmem.memory import decisions
from gitmem.publish.pr_workflow import base_catch_up
from gitmem.workspace import Workspace
from tests.cycle.test_two_writers import session
from tests.support.gitcli import git
from tests.support.helpers import DANA, GitRepo


def _both_asked(repo: GitRepo, run) -> str:
    """`side` asks D-0001 and answers it; main asks its own D-0001. The commit main was at before."""
    start = git(repo.path, "rev-parse", "HEAD").strip()
    git(repo.path, "switch", "-q", "-c", "side")
    assert run(["decision", "ask", "--title", "A?", "--recommendation", "yes"]) == ExitCode.OK
    assert run(["decision", "answer", "D-0001", "--answer", "yes, do A"]) == ExitCode.OK
    git(repo.path, "commit", "-q", "-am", "session: A asked and answered")
    git(repo.path, "switch", "-q", "main")
    assert run(["decision", "ask", "--title", "B?", "--recommendation", "no"]) == ExitCode.OK
    git(repo.path, "commit", "-q", "-am", "session: B asked")
    return start


def _answered_under_new_id(text: str) -> None:
    doc = decisions.parse(text)
    assert not doc.problems
    by_title = {d.title: d for d in doc.all}
    assert by_title["B?"].id == "D-0001" and by_title["B?"].answered is None
    assert by_title["A?"].id == "D-0002"
    assert by_title["A?"].get("Answer") == "yes, do A" and by_title["A?"].answered is not None


def test_gitmem_merge_keeps_the_answer_of_a_side_decision_it_renumbers(memrepo: GitRepo, cli) -> None:
    start = _both_asked(memrepo, lambda argv: cli(argv, cwd=memrepo.path).code)
    merged = cli(["merge", "side"], cwd=memrepo.path)
    assert merged.code == ExitCode.OK, merged.out + merged.err
    assert "D-0001 is D-0002 now" in merged.out + merged.err
    _answered_under_new_id(memrepo.read("DECISIONS.md"))
    assert cli(["check"], cwd=memrepo.path).code == ExitCode.OK
    verified = cli(["verify", "--range", f"{start}..HEAD"], cwd=memrepo.path)
    assert verified.code == ExitCode.OK, verified.out + verified.err


def test_verify_still_refuses_a_merge_that_drops_the_side_branchs_answer(memrepo: GitRepo, cli) -> None:
    """The renamed view is the rule's, not a free pass: a merge that keeps the side's decision under its new ID
    but loses its answer is GM205 still."""
    _both_asked(memrepo, lambda argv: cli(argv, cwd=memrepo.path).code)
    assert cli(["merge", "side"], cwd=memrepo.path).code == ExitCode.OK
    text = memrepo.read("DECISIONS.md")
    lost = "\n".join(line for line in text.split("\n") if "yes, do A" not in line and "- Answered:" not in line)
    memrepo.write("DECISIONS.md", lost)
    git(memrepo.path, "commit", "-q", "--amend", "--no-verify", "-am", "gitmem: merge side")
    verified = cli(["verify", "--range", "HEAD^1..HEAD"], cwd=memrepo.path)
    assert verified.code != ExitCode.OK
    assert "GM205" in verified.out + verified.err and "D-0002" in verified.out + verified.err


def test_git_merge_through_the_driver_renumbers_the_side_decision_and_keeps_its_answer(memrepo: GitRepo) -> None:
    session(memrepo, "init")            # registers the merge driver
    git(memrepo.path, "add", ".gitattributes", who=DANA)
    git(memrepo.path, "commit", "-q", "-m", "merge memory by memory rules", who=DANA)

    def run(argv: list[str]) -> int:
        return session(memrepo, *argv).returncode

    start = _both_asked(memrepo, run)
    git(memrepo.path, "merge", "-q", "--no-edit", "side", who=DANA)
    _answered_under_new_id(memrepo.read("DECISIONS.md"))
    assert session(memrepo, "check").returncode == 0
    assert session(memrepo, "verify", "--range", f"{start}..HEAD").returncode == 0


def test_the_catch_up_of_a_base_keeps_the_answer_of_a_pr_branchs_decision_it_renumbers(memrepo: GitRepo,
                                                                                        cli) -> None:
    """Pull-request mode brings the base into the open PR's branch (`pr_workflow.base_catch_up`, through the same
    `sidemerge.merged_commit`): a decision asked and answered on the PR's branch while a session asked on the
    base is renamed after the base's, answer and all, and the catch-up is not refused."""
    start = _both_asked(memrepo, lambda argv: cli(argv, cwd=memrepo.path).code)
    ws = Workspace.for_repo(open_repo(memrepo.path), load_config(Path(memrepo.path)))
    said: list[str] = []
    base_head = git(memrepo.path, "rev-parse", "main").strip()
    tip = git(memrepo.path, "rev-parse", "side").strip()
    caught_up = base_catch_up(ws, say=said.append)(base_head, "side", tip)
    assert caught_up != tip, said
    git(memrepo.path, "reset", "-q", "--hard", caught_up)
    _answered_under_new_id(memrepo.read("DECISIONS.md"))
    assert not [v for v in verify_range(ws, start, caught_up).violations if v.is_error]


def test_an_answered_import_decision_on_a_branch_keeps_its_answer_when_merged_over_a_new_ask(memrepo: GitRepo,
                                                                                             cli) -> None:
    """`gitmem import` on a branch asks one decision for its batch; the human answers it there while main asks
    its own D-0001. The import's decision lands as D-0002, answered."""
    start = git(memrepo.path, "rev-parse", "HEAD").strip()
    git(memrepo.path, "switch", "-q", "-c", "side")
    memrepo.write("CLAUDE.md", "# Notes\n\n- The API lives in src/api.\n- Releases go out on Fridays.\n")
    assert cli(["import", "notes"], cwd=memrepo.path).code == ExitCode.OK
    imported = decisions.parse(memrepo.read("DECISIONS.md")).all[0]
    assert cli(["decision", "answer", imported.id, "--answer", "take them"], cwd=memrepo.path).code == ExitCode.OK
    git(memrepo.path, "add", "-A")
    git(memrepo.path, "commit", "-q", "-m", "import the notes, answered")
    git(memrepo.path, "switch", "-q", "main")
    assert cli(["decision", "ask", "--title", "B?", "--recommendation", "no"], cwd=memrepo.path).code == ExitCode.OK
    git(memrepo.path, "commit", "-q", "-am", "session: B asked")
    merged = cli(["merge", "side"], cwd=memrepo.path)
    assert merged.code == ExitCode.OK, merged.out + merged.err
    by_title = {d.title: d for d in decisions.parse(memrepo.read("DECISIONS.md")).all}
    assert by_title["B?"].id == "D-0001"
    assert by_title[imported.title].id == "D-0002" and by_title[imported.title].get("Answer") == "take them"
    verified = cli(["verify", "--range", f"{start}..HEAD"], cwd=memrepo.path)
    assert verified.code == ExitCode.OK, verified.out + verified.err
