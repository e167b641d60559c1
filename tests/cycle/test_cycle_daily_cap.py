"""A cycle's own daily cap (gitmem.cycle.allowance): over `cycle.tokens_per_day` or `cycle.cost_per_day`, by what
today's cycles recorded in LOG Evidence, `gitmem cycle` refuses to start (exit 3, GM750) and changes nothing,
until the next day or a higher cap. Only the runner's `tokens:` line counts, never one the agent wrote."""
from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from gitmem import codes
from gitmem.cycle import allowance
from gitmem.cycle.runner import CycleRefused, Settings, run_cycle
from gitmem.errors import ExitCode
from gitmem.memory import log
from gitmem.memory.usage import evidence_lines, recorded
from gitmem.memory_writer import MemoryWriter
from gitmem.report.evidence import read_evidence
from tests.support.cycle_support import WritingBackend, built, is_clean
from tests.support.helpers import GitRepo

CAPPED = "  tokens_per_day: 4000\n"      # WritingBackend reports 2400 a cycle: the second goes over


def _capped(repo: GitRepo, config: str = CAPPED) -> None:
    """The template's gitmem.yaml (its caps commented out: none) with one `cycle:` cap set as `config` says."""
    text = repo.read("gitmem.yaml")
    assert "\ncycle:\n" in text and "\n  tokens_per_day:" not in text
    repo.commit_files({"gitmem.yaml": text.replace("\ncycle:\n", "\ncycle:\n" + config, 1)}, "a daily cap")


def run(repo: GitRepo, task: str = "write hello.txt") -> int:
    return run_cycle(repo.ws(), WritingBackend(built(task)), settings=Settings()).exit_code


def test_a_cycle_over_the_daily_token_cap_refuses_and_changes_nothing(memrepo: GitRepo) -> None:
    _capped(memrepo)
    assert run(memrepo, "one") == ExitCode.OK
    assert run(memrepo, "two") == ExitCode.OK          # 2400 of 4000 before it: it may start
    head, log_text = memrepo.head(), memrepo.read("LOG.md")
    try:
        run(memrepo, "three")
        raise AssertionError("the third cycle started over the cap")
    except CycleRefused as refused:
        assert refused.exit_code == ExitCode.DIRTY == 3 and refused.code is codes.CYCLE_OVER_DAILY_CAP
        assert "4800 tokens today, over 4000" in str(refused) and "cycle.tokens_per_day" in str(refused)
    assert memrepo.head() == head and memrepo.read("LOG.md") == log_text and is_clean(memrepo)


def test_the_refusal_reaches_the_command_line_as_exit_3(memrepo: GitRepo, cli) -> None:
    _capped(memrepo, "  cost_per_day: 0.5\n")
    memrepo.commit_files({"gitmem.yaml": memrepo.read("gitmem.yaml").replace(
        "  # backend: anthropic", "  backend: command\n  command: 'true'\n  #")}, "a command agent")
    writer = MemoryWriter(memrepo.ws())
    writer.add_log_entry(task="earlier", outcome="built", result="done", cycle=1,
                         evidence="tokens: input 10, output 5, cost_usd 0.75, total 15")
    memrepo.commit_files({"LOG.md": memrepo.read("LOG.md")}, "cycle 1")
    head = memrepo.head()
    result = cli(["cycle"], cwd=memrepo.path)
    assert result.code == 3, result.err
    assert "refused" in result.err and "$0.75 today, over $0.50" in result.err and "cycle.cost_per_day" in result.err
    assert memrepo.head() == head and is_clean(memrepo)


def test_yesterdays_spending_does_not_count_today(memrepo: GitRepo) -> None:
    _capped(memrepo)
    yesterday = datetime.now(memrepo.ws().config.tzinfo()) - timedelta(days=1, hours=1)
    writer = MemoryWriter(memrepo.ws(), clock=lambda: yesterday)
    for n in (1, 2, 3):
        writer.add_log_entry(task=f"t{n}", outcome="built", result="done", cycle=n,
                             evidence="tokens: input 3000, output 1000, total 4000")
    memrepo.commit_files({"LOG.md": memrepo.read("LOG.md")}, "yesterday's cycles")
    assert allowance.spent_today(memrepo.ws(), yesterday).tokens == 12000
    assert allowance.spent_today(memrepo.ws(), yesterday + timedelta(days=1, hours=1)).tokens == 0
    assert run(memrepo) == ExitCode.OK


def test_a_human_raising_the_cap_lets_the_cycle_start(memrepo: GitRepo) -> None:
    _capped(memrepo, "  tokens_per_day: 1000\n")
    assert run(memrepo, "one") == ExitCode.OK
    try:
        run(memrepo, "two")
        raise AssertionError("started over the cap")
    except CycleRefused:
        pass
    memrepo.commit_files({"gitmem.yaml": memrepo.read("gitmem.yaml").replace("tokens_per_day: 1000",
                                                                            "tokens_per_day: 100000")}, "raise")
    assert run(memrepo, "two") == ExitCode.OK


def test_no_cap_means_no_refusal(memrepo: GitRepo) -> None:
    assert allowance.Caps.of(memrepo.ws().config) == allowance.Caps()
    for task in ("one", "two", "three"):
        assert run(memrepo, task) == ExitCode.OK


# -- what counts: the runner's line, not the agent's ----------------------------------------------------------

FORGED = ("\n- Task: x\n- Evidence: tokens: input 1, output 0, total 1\n  cost: $0.01\n"
          "  runner: context 100 tokens of 60000 (estimate)\n"
          "  tokens: input 1200, output 300, cost_usd 0.4, total 1500\n- Result: done\n")


def test_a_forged_tokens_line_in_the_agents_evidence_is_not_counted() -> None:
    found = recorded(evidence_lines(FORGED))
    assert found.usage is not None and found.usage.total == 1500 and found.cost == 0.4
    facts = read_evidence(FORGED)
    assert facts.usage is not None and facts.usage.total == 1500 and facts.cost == 0.4


def test_a_backend_that_reports_no_usage_still_leaves_the_runners_line_last(memrepo: GitRepo) -> None:
    """Without usage from the backend the runner writes `tokens: not reported`: the agent's own `tokens:` line is
    still not the last one, so it counts for nothing."""
    def forger(memory, request) -> None:
        (request.root / "hello.txt").write_text("hi\n", encoding="utf-8")
        memory.add_log_entry(task="forge", outcome="built", result="done",
                             evidence="tokens: input 1, output 0, total 1")
        memory.add_now_block(did="forge", human="nothing", next="more")

    run_cycle(memrepo.ws(), WritingBackend(forger, usage={}), settings=Settings())
    entry = log.parse(memrepo.read("LOG.md")).entries[-1]
    assert (entry.get("Evidence") or "").rstrip().endswith("tokens: not reported")
    assert read_evidence(entry.render()).usage is None
    assert allowance.spent_today(memrepo.ws(), datetime.now(memrepo.ws().config.tzinfo())).tokens == 0


def test_an_agent_that_logs_a_tiny_usage_still_hits_the_cap(memrepo: GitRepo) -> None:
    """The agent writes `tokens: total 1` into its own entry's Evidence; the runner appends its real line after
    it, and only that one counts toward the cap."""
    _capped(memrepo, "  tokens_per_day: 2000\n")

    def forger(memory, request) -> None:
        (request.root / "hello.txt").write_text("hi\n", encoding="utf-8")
        memory.add_log_entry(task="forge", outcome="built", result="done",
                             evidence="tokens: input 1, output 0, total 1")
        memory.add_now_block(did="forge", human="nothing", next="more")

    assert run_cycle(memrepo.ws(), WritingBackend(forger), settings=Settings()).exit_code == ExitCode.OK
    evidence = log.parse(memrepo.read("LOG.md")).entries[-1].get("Evidence") or ""
    assert evidence.index("total 1\n") < evidence.index("total 2400")          # both lines are there, the runner's last
    assert allowance.spent_today(memrepo.ws(), datetime.now(memrepo.ws().config.tzinfo())).tokens == 2400
    try:
        run(memrepo, "again")
        raise AssertionError("the forged line hid the spending")
    except CycleRefused as refused:
        assert "2400 tokens today, over 2000" in str(refused)


@pytest.mark.parametrize("forged", [
    # a whitespace-only line ends the field for the runner, which appends its line before it
    "- Evidence: did stuff\n  \n  tokens: input 1, output 0, total 1\n",
    # `* Evidence:` is the entry's Evidence field too, so the runner's line goes there, not to the second one
    "* Evidence: did stuff\n- Evidence: tokens: input 1, output 0, total 1\n",
])
def test_a_tokens_line_the_agent_writes_past_the_runners_evidence_is_not_counted(memrepo: GitRepo,
                                                                                  forged: str) -> None:
    """The agent writes LOG.md itself, shaped so that a reader that delimits Evidence its own way reads a
    `tokens:` line of the agent's after the runner's; the readers read the field the runner appended to."""
    def forger(memory, request) -> None:
        (request.root / "hello.txt").write_text("hi\n", encoding="utf-8")
        memory.add_log_entry(task="forge", outcome="built", result="done", evidence="did stuff")
        memory.add_now_block(did="forge", human="nothing", next="more")
        path = request.root / "LOG.md"
        path.write_text(path.read_text(encoding="utf-8").replace("- Evidence: did stuff\n", forged),
                        encoding="utf-8")

    assert run_cycle(memrepo.ws(), WritingBackend(forger), settings=Settings()).exit_code == ExitCode.OK
    entry = log.parse(memrepo.read("LOG.md")).entries[-1]
    assert "total 1\n" in entry.render() and "total 2400" in entry.render()
    assert allowance.spent_today(memrepo.ws(), datetime.now(memrepo.ws().config.tzinfo())).tokens == 2400
    facts = read_evidence("\n".join(entry.body))
    assert facts.usage is not None and facts.usage.total == 2400
