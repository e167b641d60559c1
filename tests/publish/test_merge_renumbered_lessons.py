"""A lesson ID is a position in the merged history, as a decision ID is: a human's session adds a lesson while a
scheduled cycle (or a branch) adds one under the same next ID, and the side that lands second takes the IDs after
the other's highest, with the cycles its lines name (`Happened`, `Confirmed`) and what its new NOW blocks say of
it. The other side's lessons never change. Real repositories: a bare origin, the runner's clone and the human's,
the real CLI for the human; `gitmem merge`, `git merge` through the driver, and the cycle's push (a rebase)."""
from __future__ import annotations

from pathlib import Path

import pygit2

from gitmem.checks.check_and_verify import verify_range
from gitmem.config import Config, load_config
from gitmem.cycle.runner import Settings, run_cycle
from gitmem.errors import ExitCode
from gitmem.gitio import Repo
from gitmem.memory import lessons, log, now
from gitmem.publish.pr_workflow import base_catch_up
from gitmem.workspace import Workspace
from tests.cycle.test_two_writers import _two_clones_with_the_driver, session
from tests.support.cycle_support import WritingBackend, built, clone, file_at, origin_and_clone
from tests.support.gitcli import git
from tests.support.helpers import DANA, GitRepo


def _lesson(repo: GitRepo, title: str) -> None:
    session(repo, "lesson", "add", "--title", title, "--happened", f"{title} went wrong", "--why", "haste",
            "--change", "slow down")


def _session_cycle(repo: GitRepo, task: str) -> None:
    session(repo, "log", "add", "--task", task, "--outcome", "built", "--result", "done by hand")


def _both_added(repo: GitRepo) -> str:
    """Branch `side`: cycle 1 adds L-0001 and a NOW block naming it, cycle 2 confirms it. main: cycle 1 adds its
    own L-0001 and NOW block. The commit both start from."""
    start = git(repo.path, "rev-parse", "HEAD", who=DANA).strip()
    git(repo.path, "switch", "-q", "-c", "side", who=DANA)
    _session_cycle(repo, "side one")
    _lesson(repo, "side lesson")
    session(repo, "now", "add", "--did", "wrote L-0001", "--human", "nothing", "--next", "confirm L-0001")
    git(repo.path, "commit", "-q", "-am", "session: side one", who=DANA)
    _session_cycle(repo, "side two")
    session(repo, "lesson", "confirm", "L-0001", "--evidence", "it held again")
    git(repo.path, "commit", "-q", "-am", "session: side two", who=DANA)
    git(repo.path, "switch", "-q", "main", who=DANA)
    _session_cycle(repo, "main one")
    _lesson(repo, "main lesson")
    session(repo, "now", "add", "--did", "wrote L-0001 too", "--human", "nothing", "--next", "more")
    git(repo.path, "commit", "-q", "-am", "session: main one", who=DANA)
    return start


def _side_follows_main(repo: GitRepo) -> None:
    doc = lessons.parse(repo.read("LESSONS.md"))
    assert not doc.problems
    assert [(item.id, item.title) for item in doc.lessons] == [("L-0001", "main lesson"), ("L-0002", "side lesson")]
    main_lesson, side_lesson = doc.lessons
    assert main_lesson.happened is not None and main_lesson.happened.cycle == 1     # main's: as written
    assert side_lesson.happened is not None and side_lesson.happened.cycle == 2     # the side's cycle 1 is 2 now
    assert [event.cycle for _, event in side_lesson.confirmations if event is not None] == [3]
    assert [(e.cycle, e.get("Task")) for e in log.parse(repo.read("LOG.md")).entries] == [
        (1, "main one"), (2, "side one"), (3, "side two")]
    blocks = {b.cycle: [f.value for f in b.fields] for b in now.parse(repo.read("NOW.md")).blocks}
    assert blocks[1] == ["wrote L-0001 too", "nothing", "more"]                      # main's: as written
    assert blocks[2] == ["wrote L-0002", "nothing", "confirm L-0002"]


def test_gitmem_merge_renumbers_the_side_branchs_new_lessons_after_ours(memrepo: GitRepo) -> None:
    start = _both_added(memrepo)
    done = session(memrepo, "merge", "side")
    assert "side's L-0001 is L-0002 now" in done.stdout + done.stderr
    _side_follows_main(memrepo)
    assert session(memrepo, "check").returncode == 0
    assert session(memrepo, "verify", "--range", f"{start}..HEAD").returncode == 0


def test_git_merge_through_the_driver_renumbers_the_merged_sides_new_lessons(memrepo: GitRepo) -> None:
    session(memrepo, "init")            # registers the merge driver
    git(memrepo.path, "add", ".gitattributes", who=DANA)
    git(memrepo.path, "commit", "-q", "-m", "merge memory by memory rules", who=DANA)
    start = _both_added(memrepo)
    git(memrepo.path, "merge", "-q", "--no-edit", "side", who=DANA)
    _side_follows_main(memrepo)
    assert session(memrepo, "check").returncode == 0
    assert session(memrepo, "verify", "--range", f"{start}..HEAD").returncode == 0


def test_a_session_lesson_pushed_while_the_cycle_adds_one_leaves_the_cycles_lesson_the_next_id(
        tmp_path: Path, memrepo: GitRepo) -> None:
    """The scheduled cycle adds L-0001 while a human's session pushes its own L-0001: the cycle's push rebases
    over the session, and its lesson is L-0002, dated by its renumbered cycle; the session's is as written."""
    origin = origin_and_clone(tmp_path, memrepo)
    start = memrepo.head()
    human = clone(origin, tmp_path / "dana", DANA)

    def cycle_while_a_session_pushes(memory, request) -> None:
        _session_cycle(human, "fix the README by hand")
        _lesson(human, "session lesson")
        git(human.path, "commit", "-q", "-am", "session: a lesson", who=DANA)
        git(human.path, "push", "-q", "origin", "main", who=DANA)
        built("write hello.txt")(memory, request)
        memory.add_lesson(title="cycle lesson", happened="the cycle slipped", why="haste", change="slow down")

    report = run_cycle(memrepo.ws(), WritingBackend(cycle_while_a_session_pushes),
                       settings=Settings(push=True, sleep=lambda s: None))
    assert (report.exit_code, report.pushed, report.cycle) == (ExitCode.OK, True, 2), report.messages
    remote = pygit2.Repository(str(origin))
    doc = lessons.parse(file_at(remote, "refs/heads/main", "LESSONS.md") or "")
    assert [(item.id, item.title) for item in doc.lessons] == [("L-0001", "session lesson"),
                                                                ("L-0002", "cycle lesson")]
    assert [item.happened.cycle for item in doc.lessons if item.happened is not None] == [1, 2]
    assert any("L-0001 is L-0002 now" in m for m in report.messages)
    assert verify_range(Workspace.for_repo(Repo(remote), Config()), start, "refs/heads/main").violations == []


def test_a_lesson_that_landed_already_is_not_renamed_a_second_time(memrepo: GitRepo) -> None:
    """The side branch was squash-merged (its lesson is main's already) and main added another lesson since:
    merging the branch adds no copy of its lesson under a new ID."""
    git(memrepo.path, "switch", "-q", "-c", "side", who=DANA)
    _session_cycle(memrepo, "side one")
    _lesson(memrepo, "side lesson")
    git(memrepo.path, "commit", "-q", "-am", "session: side one", who=DANA)
    git(memrepo.path, "switch", "-q", "main", who=DANA)
    git(memrepo.path, "merge", "-q", "--squash", "side", who=DANA)
    git(memrepo.path, "commit", "-q", "-m", "side one (#1)", who=DANA)
    _session_cycle(memrepo, "main two")
    _lesson(memrepo, "main lesson")
    git(memrepo.path, "commit", "-q", "-am", "session: main two", who=DANA)
    session(memrepo, "merge", "side")
    assert [(item.id, item.title) for item in lessons.parse(memrepo.read("LESSONS.md")).lessons] == [
        ("L-0001", "side lesson"), ("L-0002", "main lesson")]
    assert session(memrepo, "check").returncode == 0


def test_git_pull_rebase_through_the_driver_puts_the_sessions_lessons_after_the_ones_pushed_first(
        tmp_path: Path, memrepo: GitRepo) -> None:
    """Two clones of a bare origin with the driver registered: the desktop pushes cycle 1 with L-0001; the laptop
    made its own cycle 1 with L-0001, then cycle 2 confirming it. `git pull --rebase` replays the laptop's two
    commits: its cycles are 2 and 3, its lesson L-0002, which names the cycles it now happened and was confirmed
    in, and the confirmation lands on it, never on the desktop's lesson (the two read alike but for the title)."""
    first, second = _two_clones_with_the_driver(tmp_path, memrepo)
    for repo, where in ((first, "desktop"), (second, "laptop")):
        _session_cycle(repo, f"from the {where}")
        session(repo, "lesson", "add", "--title", f"{where} lesson", "--happened", "x", "--why", "y", "--change", "z")
        session(repo, "now", "add", "--did", f"wrote L-0001 on the {where}", "--human", "nothing", "--next", "more")
        git(repo.path, "commit", "-q", "-am", f"session: the {where}", who=DANA)
    _session_cycle(second, "again on the laptop")
    session(second, "lesson", "confirm", "L-0001", "--evidence", "it held")
    session(second, "now", "add", "--did", "confirmed L-0001", "--human", "nothing", "--next", "more")
    git(second.path, "commit", "-q", "-am", "session: the laptop again", who=DANA)
    git(first.path, "push", "-q", "origin", "main", who=DANA)
    git(second.path, "pull", "-q", "--rebase", "origin", "main", who=DANA)
    doc = lessons.parse(second.read("LESSONS.md"))
    assert [(item.id, item.title, item.happened.cycle if item.happened else None,
             [event.cycle for _, event in item.confirmations if event is not None]) for item in doc.lessons] == [
        ("L-0001", "desktop lesson", 1, []), ("L-0002", "laptop lesson", 2, [3])]
    assert [(e.cycle, e.get("Task")) for e in log.parse(second.read("LOG.md")).entries] == [
        (1, "from the desktop"), (2, "from the laptop"), (3, "again on the laptop")]
    blocks = {b.cycle: b.fields[0].value for b in now.parse(second.read("NOW.md")).blocks if b.cycle}
    assert blocks == {1: "wrote L-0001 on the desktop", 2: "wrote L-0002 on the laptop", 3: "confirmed L-0002"}
    assert session(second, "check").returncode == 0
    upstream = git(second.path, "rev-parse", "origin/main", who=DANA).strip()
    assert session(second, "verify", "--range", f"{upstream}..HEAD").returncode == 0


def test_the_catch_up_of_a_base_renumbers_the_pr_branchs_new_lessons(memrepo: GitRepo) -> None:
    """Pull-request mode brings the base into the open PR's branch (`pr_workflow.base_catch_up`): a session's
    lesson on the base and the PR branch's lesson under the same ID both land, the branch's after, so the PR
    merges on GitHub (which runs no driver) without a conflict in LESSONS."""
    start = _both_added(memrepo)
    ws = Workspace.for_repo(Repo(pygit2.Repository(str(memrepo.path))), load_config(memrepo.path))
    said: list[str] = []
    base_head = git(memrepo.path, "rev-parse", "main", who=DANA).strip()
    tip = git(memrepo.path, "rev-parse", "side", who=DANA).strip()
    caught_up = base_catch_up(ws, say=said.append)(base_head, "side", tip)
    assert caught_up != tip, said
    git(memrepo.path, "reset", "-q", "--hard", caught_up, who=DANA)
    _side_follows_main(memrepo)
    assert not [v for v in verify_range(ws, start, caught_up).violations if v.is_error]


def _a_lesson_both_clones_hold(tmp_path: Path, memrepo: GitRepo) -> tuple[GitRepo, GitRepo]:
    """Two clones with the driver, both holding cycle 1 and its lesson L-0001."""
    first, second = _two_clones_with_the_driver(tmp_path, memrepo)
    _session_cycle(first, "the first task")
    _lesson(first, "shared lesson")
    git(first.path, "commit", "-q", "-am", "session: cycle 1 and L-0001", who=DANA)
    git(first.path, "push", "-q", "origin", "main", who=DANA)
    git(second.path, "pull", "-q", "--rebase", "origin", "main", who=DANA)
    return first, second


def _confirmed_cycles(repo: GitRepo) -> list[int]:
    (lesson,) = lessons.parse(repo.read("LESSONS.md")).lessons
    return [event.cycle for _, event in lesson.confirmations if event is not None]


def laptop_confirmed_while_the_desktop_pushed(tmp_path: Path, memrepo: GitRepo) -> GitRepo:
    """The laptop's clone, not pulled since the desktop pushed its cycle 2 (LOG only): its own cycle 2 committed,
    which confirmed L-0001."""
    first, second = _a_lesson_both_clones_hold(tmp_path, memrepo)
    _session_cycle(first, "desktop task")
    git(first.path, "commit", "-q", "-am", "session: the desktop", who=DANA)
    git(first.path, "push", "-q", "origin", "main", who=DANA)
    _session_cycle(second, "laptop task")
    session(second, "lesson", "confirm", "L-0001", "--evidence", "it held")
    git(second.path, "commit", "-q", "-am", "session: the laptop", who=DANA)
    return second


def test_a_pull_rebase_that_renumbers_only_log_is_stopped_before_the_push_and_gitmem_merge_lands_it(
        tmp_path: Path, memrepo: GitRepo) -> None:
    """The desktop pushes cycle 2 (LOG only); the laptop's cycle 2 confirmed L-0001. `git pull --rebase` runs the
    driver on LOG alone (LESSONS changed on one side only): the laptop's entry is cycle 3 and its Confirmed line
    still names cycle 2, the desktop's. `verify` (the pre-push hook) stops it at that line, GM407; what the hint
    says, `git reset --keep ORIG_HEAD` then `gitmem merge origin/main`, lands it with the line naming its entry."""
    second = laptop_confirmed_while_the_desktop_pushed(tmp_path, memrepo)
    git(second.path, "pull", "-q", "--rebase", "origin", "main", who=DANA)
    assert [(e.cycle, e.get("Task")) for e in log.parse(second.read("LOG.md")).entries][1:] == [
        (2, "desktop task"), (3, "laptop task")]
    assert _confirmed_cycles(second) == [2]             # git replayed LESSONS as the laptop wrote it
    upstream = git(second.path, "rev-parse", "origin/main", who=DANA).strip()
    stopped = session(second, "verify", "--range", f"{upstream}..HEAD", check=False)
    line = second.read("LESSONS.md").splitlines().index(next(
        text for text in second.read("LESSONS.md").splitlines() if text.startswith("- Confirmed:"))) + 1
    assert stopped.returncode == 1
    assert stopped.stdout.startswith(f"LESSONS.md:{line}: GM407 L-0001's Confirmed line names cycle 2, but the LOG "
                                     "entry this change wrote as cycle 2 is cycle 3 now")
    assert "git reset --keep ORIG_HEAD" in stopped.stdout and "gitmem merge origin/BRANCH" in stopped.stdout
    git(second.path, "reset", "-q", "--keep", "ORIG_HEAD", who=DANA)
    session(second, "merge", "origin/main")
    entries = {e.get("Task"): e.cycle for e in log.parse(second.read("LOG.md")).entries}
    assert _confirmed_cycles(second) == [entries["laptop task"]]
    assert session(second, "verify", "--range", f"{upstream}..HEAD").returncode == 0


def test_a_git_merge_of_a_side_that_alone_confirmed_a_lesson_is_stopped_at_the_stale_line(
        tmp_path: Path, memrepo: GitRepo) -> None:
    """`git merge` of a branch whose cycle 2 confirmed L-0001, into a main that logged its own cycle 2: the driver
    makes the branch's entry cycle 3, git takes the branch's LESSONS whole, and the merge commit is GM407 there."""
    first, _ = _a_lesson_both_clones_hold(tmp_path, memrepo)
    start = first.head()
    git(first.path, "switch", "-q", "-c", "side", who=DANA)
    _session_cycle(first, "side task")
    session(first, "lesson", "confirm", "L-0001", "--evidence", "it held")
    git(first.path, "commit", "-q", "-am", "session: side", who=DANA)
    git(first.path, "switch", "-q", "main", who=DANA)
    _session_cycle(first, "main task")
    git(first.path, "commit", "-q", "-am", "session: main", who=DANA)
    git(first.path, "merge", "-q", "--no-edit", "side", who=DANA)
    assert [(e.cycle, e.get("Task")) for e in log.parse(first.read("LOG.md")).entries][1:] == [
        (2, "main task"), (3, "side task")]
    assert _confirmed_cycles(first) == [2]
    stopped = session(first, "verify", "--range", f"{start}..HEAD", check=False)
    assert stopped.returncode == 1
    assert "GM407 L-0001's Confirmed line names cycle 2, but the LOG entry this change wrote as cycle 2 is cycle 3 " \
           "now" in stopped.stdout
