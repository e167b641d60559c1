"""Hostile agents on the surfaces the last merge added: the agent's stderr quoted in Evidence, the fleet's
terminal output over an agent's repository. What the agent prints or writes is an attacker's text: it reaches the
human's LOG and terminal without a control character (an ANSI escape rewrites the screen, a bare CR hides what
came before it, and a control character in LOG fails the human's own `gitmem check`)."""
from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pygit2
import pytest

from gitmem import gitio
from gitmem.cycle.runner import Settings, run_cycle
from gitmem.errors import ExitCode
from gitmem.memory.decoding import control_characters
from gitmem.memory_writer import MemoryWriter
from gitmem.views.actions import cycle_summary
from tests.support.cycle_support import WritingBackend, built, file_at, is_clean, origin_and_clone
from tests.support.gitcli import git, protect_branches
from tests.support.helpers import GitRepo, isolate_git_env, make_repo
from tests.support.hostile import command_agent, no_traceback

# Python escapes in the agent script's source: the agent writes the real characters.
ESCAPES = "\\x1b]0;owned\\x07\\x1b[2J\\x1b[31mred\\x1b[0m\\rhidden\\x08\\x9b1m\\u2028next\\u202eevil"


def test_the_agents_stderr_reaches_evidence_and_output_without_control_characters(tmp_path: Path, memrepo: GitRepo,
                                                                                  cli) -> None:
    command_agent(tmp_path, memrepo, f"sys.stderr.write('warn: {ESCAPES} done\\n')\n")
    result = cli(["cycle"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err
    log_text = file_at(memrepo.repo, "HEAD", "LOG.md") or ""
    assert "its stderr ended with: warn:" in log_text and "red" in log_text and "done" in log_text
    assert list(control_characters(log_text.encode())) == []
    assert "\x1b" not in result.out + result.err and "\r" not in result.out + result.err
    assert cli(["check"], cwd=memrepo.path).code == ExitCode.OK
    assert is_clean(memrepo) and no_traceback(result.err)


def test_a_failing_agents_stderr_with_escapes_still_gets_its_no_build_entry(tmp_path: Path, memrepo: GitRepo,
                                                                            cli) -> None:
    command_agent(tmp_path, memrepo, f"sys.stderr.write('boom {ESCAPES} end\\n')\nsys.exit(3)\n",
                  write_memory=False)
    result = cli(["cycle"], cwd=memrepo.path)
    assert result.code == ExitCode.SALVAGED, result.err          # the cycle failed: not "refusing to write LOG.md"
    log_text = file_at(memrepo.repo, "HEAD", "LOG.md") or ""
    assert "no-build" in log_text and "exited with code 3: boom" in log_text and "end" in log_text
    assert list(control_characters(log_text.encode())) == []
    assert "\x1b" not in result.out + result.err and "\x07" not in result.out + result.err
    assert is_clean(memrepo) and no_traceback(result.err)

def test_a_side_branch_name_an_attacker_took_on_the_remote_is_passed_over_not_lost(tmp_path: Path,
                                                                                   memrepo: GitRepo) -> None:
    origin = origin_and_clone(tmp_path, memrepo)
    protect_branches(origin, "main")
    # Pushed from elsewhere (an agent with the remote's credentials, a cycle ago): this checkout never fetched it.
    git(memrepo.path, "checkout", "-q", "--orphan", "planted")
    git(memrepo.path, "commit", "-q", "--allow-empty", "-m", "planted")
    git(memrepo.path, "push", "-q", "origin", "planted:refs/heads/gitmem/cycle-1")
    planted = git(memrepo.path, "rev-parse", "planted").strip()
    git(memrepo.path, "checkout", "-q", "main")
    git(memrepo.path, "branch", "-q", "-D", "planted")
    git(memrepo.path, "update-ref", "-d", "refs/remotes/origin/gitmem/cycle-1")

    report = run_cycle(memrepo.ws(), WritingBackend(built()), settings=Settings(push=True, sleep=lambda s: None))

    assert report.exit_code == ExitCode.SALVAGED and report.push_status == "refused", report.messages
    assert report.side_branch == "gitmem/cycle-1-2"
    heads = pygit2.Repository(str(origin))
    assert str(heads.references["refs/heads/gitmem/cycle-1-2"].target) == report.commit == memrepo.head()
    assert str(heads.references["refs/heads/gitmem/cycle-1"].target) == planted, "the other branch is untouched"
    assert gitio.resolve_revision(memrepo.ws().repo, "gitmem/cycle-1-2") == memrepo.head()
    assert not gitio.branch_exists(memrepo.ws().repo, "gitmem/cycle-1")


RAW_ESCAPES = "\x1b]52;c;b3duZWQ=\x07\x1b[2J\x9b31m\rhid\u202eden\x08"


@pytest.fixture(scope="module")
def hostile_agent(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """An agent's repository as it may come to the human's fleet (or a pull): a decision whose title and
    recommendation carry terminal escapes, and a waiting branch written under .git/refs by a name git refuses."""
    with pytest.MonkeyPatch.context() as patch:
        isolate_git_env(patch)
        root = tmp_path_factory.mktemp("hostile-fleet")
        agent = make_repo(root / "evil")
        MemoryWriter(agent.ws(), clock=lambda: datetime.now(UTC) - timedelta(days=1)).ask_decision(
            title="TITLE", recommendation="ADVICE")
        agent.write("DECISIONS.md", agent.read("DECISIONS.md").replace("TITLE", f"pick {RAW_ESCAPES} one")
                    .replace("ADVICE", f"yes{RAW_ESCAPES}"))
        git(agent.path, "commit", "-qam", "a decision with escapes")
        refs = agent.path / ".git" / "refs" / "heads" / "gitmem" / "proposal"
        refs.mkdir(parents=True)
        (refs / "cycle-9\x1b[2J").write_text(agent.head() + "\n", encoding="utf-8")
        git(agent.path, "branch", "gitmem/proposal/cycle-8")
        (root / "fleet.yaml").write_text("agents:\n  - name: evil\n    repo: evil\n", encoding="utf-8")
        yield root


def _no_terminal_controls(text: str) -> None:
    assert not [c for c in text if (ord(c) < 32 and c not in "\n\t") or 0x7f <= ord(c) <= 0x9f
                or c in "\u202e\u2028"], text


@pytest.mark.parametrize("argv", [["fleet", "pending"], ["fleet", "status"], ["fleet", "pending", "--json"],
                                  ["fleet", "status", "--json"], ["pending"], ["status"], ["pending", "--json"],
                                  ["status", "--json"]])
def test_an_agents_text_reaches_the_terminal_without_escapes_and_its_bad_refs_break_nothing(
        hostile_agent: Path, cli, argv: list[str]) -> None:
    where = hostile_agent if argv[0] == "fleet" else hostile_agent / "evil"
    done = cli(argv, cwd=where)
    assert done.code == ExitCode.OK, done.out + done.err
    _no_terminal_controls(done.out + done.err)
    if argv[:2] == ["fleet", "status"]:       # rows, no titles; the refused ref name is not listed
        assert "cycle-8" in done.out and "cycle-9" not in done.out
    else:
        assert "pick " in done.out and "\\u001b]52" in done.out and "one" in done.out, "shown, not dropped"


HOSTILE_MARKDOWN = "Fixes #1, closes GH-2 and owner/repo#3 @octocat <!-- the rest is hidden ![t](https://t.example/p.png)"


def test_the_agents_text_in_a_pull_request_notifies_links_closes_and_hides_nothing(memrepo: GitRepo) -> None:
    from gitmem.publish.pullrequest import pr_text
    from gitmem.views.pending import pending

    memory = MemoryWriter(memrepo.ws())
    memory.add_log_entry(task=HOSTILE_MARKDOWN, outcome="built", result=HOSTILE_MARKDOWN, cycle=1)
    memory.ask_decision(title=HOSTILE_MARKDOWN, recommendation=HOSTILE_MARKDOWN)
    memrepo.commit_files({"notes.md": "x\n"}, f"gitmem: cycle 1 · built · {HOSTILE_MARKDOWN}")
    subject = git(memrepo.path, "log", "-1", "--format=%s").strip()
    title, body = pr_text(memrepo.read("LOG.md"), pending(memrepo.ws()), [(memrepo.head()[:10], subject)],
                          phase="cycle", branch="gitmem/memory", base="main")
    for text in (title, body):
        for acting in ("#1", "GH-2", "#3", "@octocat"):
            assert acting not in text, (acting, text)
    assert "<!--" not in body and "![" not in body and "[t](" not in body
    assert body.count("octocat") == 5 and "the rest is hidden" in body.split("### Decisions waiting")[1]


def test_the_agents_task_in_the_cycle_commit_closes_no_issue_when_it_lands(memrepo: GitRepo) -> None:
    from tests.support.hostile import cycle

    def act(root: Path, memory: MemoryWriter, request: object) -> None:
        memory.add_log_entry(task=HOSTILE_MARKDOWN, outcome="built", result="done", cycle=1)
        memory.add_now_block(did="d", human="nothing", next="n", cycle=1)

    report = cycle(memrepo, act, finish=False)
    assert report.exit_code == ExitCode.OK, report.error
    message = git(memrepo.path, "log", "-1", "--format=%B")
    for acting in ("#1", "GH-2", "#3", "@octocat"):
        assert acting not in message, (acting, message)
    assert "Fixes #\u200b1" in message and "octocat" in message and "Gitmem-Cycle: 1" in message
    assert last_task(memrepo) == HOSTILE_MARKDOWN, "the LOG keeps the task as written"


def last_task(repo: GitRepo) -> str:
    from gitmem.memory import log

    return log.parse(repo.read("LOG.md")).entries[-1].get("Task") or ""


@pytest.mark.parametrize("line", ["\u0661 * * * *", "0 \u0663 * * *", "*/\u0665 * * * *", "0 0 \u0661-\u0663 * *",
                                  "*/0 * * * *", "0-99999999 * * * *", "*/99999999999999999999 * * * *"])
def test_an_agents_workflow_cron_is_read_with_ascii_digits_only(line: str) -> None:
    from gitmem.cycle import schedule

    assert schedule.cron_interval(line) is None


def test_the_agents_text_in_the_job_summary_hides_and_fetches_nothing(memrepo: GitRepo) -> None:
    from tests.support.hostile import cycle

    def act(root: Path, memory: MemoryWriter, request: object) -> None:
        memory.add_log_entry(task=HOSTILE_MARKDOWN, outcome="built", result="done", cycle=1)
        memory.add_now_block(did="d", human="nothing", next="n", cycle=1)
        memory.ask_decision(title=HOSTILE_MARKDOWN, recommendation="r")

    report = cycle(memrepo, act, finish=False)
    assert report.exit_code == ExitCode.OK, report.error
    summary = cycle_summary(report)
    assert "octocat" in summary and "<!--" not in summary and "![" not in summary and "@octocat" not in summary
