"""One rule for every writer: a session writes one LOG entry until it is committed (MemoryWriter), whether it
writes through `gitmem log add` or the MCP tools, and the close counts one confirmation of a lesson per commit,
so one session committed once never promotes a lesson by itself."""
from __future__ import annotations

from datetime import datetime

from gitmem.close import run_close
from gitmem.errors import ExitCode
from gitmem.memory import lessons, log
from gitmem.memory_writer import MemoryWriter
from tests.support.gitcli import git
from tests.support.helpers import HUMAN, GitRepo
from tests.support.mcp_client import call, converse

RULE = "Run the whole test suite before every commit."
LOG_ADD = ["log", "add", "--task", "t", "--outcome", "built", "--result", "r"]
ENTRY = {"task": "t", "outcome": "built", "result": "r"}


def _commit(repo: GitRepo, message: str) -> None:
    repo.stage("NOW.md", "DECISIONS.md", "LOG.md", "LESSONS.md", "RULES.md")
    repo.commit(message, author=HUMAN)


def _cycles(repo: GitRepo) -> list[int | None]:
    return [entry.cycle for entry in log.parse(repo.read("LOG.md")).entries]


def _lesson_session(repo: GitRepo, cli) -> None:
    """Session 1, committed: the lesson, in cycle 1."""
    assert cli(LOG_ADD, cwd=repo.path).code == ExitCode.OK
    assert cli(["lesson", "add", "--title", "Tests first", "--happened", "h", "--why", "w", "--change", "c",
                "--rule", RULE], cwd=repo.path).code == ExitCode.OK
    _commit(repo, "session 1")


def _close(repo: GitRepo) -> list[object]:
    result = run_close(repo.ws(), clock=lambda: datetime.now().astimezone())
    return [p["cycles"] for p in result.promoted]


def test_the_cli_refuses_a_second_entry_until_the_session_is_committed(memrepo: GitRepo, cli) -> None:
    assert cli(LOG_ADD, cwd=memrepo.path).code == ExitCode.OK
    again = cli(LOG_ADD, cwd=memrepo.path)
    assert again.code == ExitCode.VIOLATIONS
    assert "this session already wrote its LOG entry (cycle 1, not committed yet)" in again.err
    assert _cycles(memrepo) == [1], "nothing written"
    _commit(memrepo, "session 1")
    assert cli(LOG_ADD, cwd=memrepo.path).code == ExitCode.OK and _cycles(memrepo) == [1, 2]


def test_one_interactive_session_committed_once_never_promotes_a_lesson(memrepo: GitRepo, cli) -> None:
    """What `init --agent claude` lets the agent run unasked: confirm, log, confirm, log; the human commits once."""
    _lesson_session(memrepo, cli)
    said = [cli(argv, cwd=memrepo.path) for argv in (["lesson", "confirm", "L-0001", "--evidence", "held"], LOG_ADD,
                                                      ["lesson", "confirm", "L-0001", "--evidence", "held again"],
                                                      LOG_ADD)]
    assert said[-1].code == ExitCode.VIOLATIONS, said[-1].out
    _commit(memrepo, "session 2")
    assert _cycles(memrepo) == [1, 2]
    assert _close(memrepo) == []


def test_mcp_sessions_in_two_processes_are_held_as_one_until_the_commit(memrepo: GitRepo) -> None:
    first = converse([call("log_entry", ENTRY)], cwd=memrepo.path)
    second = converse([call("log_entry", ENTRY)], cwd=memrepo.path)     # a new server: the rule is in LOG
    assert not first.answers[0].is_error
    assert second.answers[0].is_error and "this session already wrote its LOG entry" in second.answers[0].text
    assert _cycles(memrepo) == [1]
    _commit(memrepo, "session 1")
    third = converse([call("log_entry", ENTRY)], cwd=memrepo.path)
    assert not third.answers[0].is_error and _cycles(memrepo) == [1, 2]


def test_mcp_and_the_cli_hold_each_other_to_the_same_rule(memrepo: GitRepo, cli) -> None:
    assert cli(LOG_ADD, cwd=memrepo.path).code == ExitCode.OK
    seen = converse([call("log_entry", ENTRY)], cwd=memrepo.path)
    assert seen.answers[0].is_error and "already wrote its LOG entry" in seen.answers[0].text
    _commit(memrepo, "session 1")
    assert not converse([call("log_entry", ENTRY)], cwd=memrepo.path).answers[0].is_error
    assert cli(LOG_ADD, cwd=memrepo.path).code == ExitCode.VIOLATIONS and _cycles(memrepo) == [1, 2]


def _two_cycles_committed_once(repo: GitRepo, cli) -> MemoryWriter:
    _lesson_session(repo, cli)
    memory = MemoryWriter(repo.ws())
    for number in (2, 3):
        memory.add_log_entry(task=f"t{number}", outcome="built", result="r", cycle=number)
        memory.confirm_lesson("L-0001", evidence="held", cycle=number)
    _commit(repo, "two cycles, committed once")
    return memory


def test_the_close_counts_two_confirmations_one_commit_added_once(memrepo: GitRepo, cli) -> None:
    """Past the writers (LOG and LESSONS written by hand, or numbered as a runner would): two cycles' entries and
    confirmations in one commit are one piece of work, and confirm the lesson once."""
    _two_cycles_committed_once(memrepo, cli)
    result = run_close(memrepo.ws(), clock=lambda: datetime.now().astimezone())
    assert result.promoted == []
    assert any("one commit confirms a lesson once" in problem for problem in result.problems), result.problems


def test_a_later_session_committed_on_its_own_is_the_confirmation_that_counts(memrepo: GitRepo, cli) -> None:
    memory = _two_cycles_committed_once(memrepo, cli)
    memory.add_log_entry(task="t4", outcome="built", result="r", cycle=4)
    memory.confirm_lesson("L-0001", evidence="held in another session", cycle=4)
    _commit(memrepo, "session 4")
    assert _close(memrepo) == [[2, 4]]
    found = lessons.parse(memrepo.read("LESSONS.md")).find("L-0001")
    assert found is not None and found.status != "open"


def test_the_stop_hook_says_the_open_entry_must_be_committed_first(memrepo: GitRepo, cli) -> None:
    from gitmem.sessions.hooks import block_reason

    assert "log it as cycle 1" in block_reason(memrepo.ws(), ["app.py"])
    assert cli(LOG_ADD, cwd=memrepo.path).code == ExitCode.OK        # an earlier session's, not committed
    said = block_reason(memrepo.ws(), ["app.py"])
    assert "LOG's last entry (cycle 1) is not committed yet" in said and "log it as cycle" not in said
    _commit(memrepo, "session 1")
    assert "log it as cycle 2" in block_reason(memrepo.ws(), ["app.py"])


def test_a_checkout_with_other_line_endings_is_not_an_uncommitted_entry(memrepo: GitRepo, cli) -> None:
    """With `core.autocrlf` (Git for Windows' default) the work tree's LOG is longer than HEAD's blob: the
    committed entries past the blob's size are still committed, as git's own status says."""
    for n in range(25):          # enough lines that the last heading moves past the blob's size
        assert cli(LOG_ADD, cwd=memrepo.path).code == ExitCode.OK
        _commit(memrepo, f"session {n + 1}")
    memrepo.repo.config["core.autocrlf"] = "true"
    (memrepo.path / "LOG.md").unlink()
    git(memrepo.path, "checkout", "--", "LOG.md")
    assert b"\r\n" in (memrepo.path / "LOG.md").read_bytes()
    assert not memrepo.repo.status(), "a clean checkout"
    added = cli(LOG_ADD, cwd=memrepo.path)
    assert added.code == ExitCode.OK, added.err
    assert _cycles(memrepo)[-1] == 26
