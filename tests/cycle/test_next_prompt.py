"""`gitmem.cycle.next_prompt`: what `gitmem context` shows, called as a library (the command only prints it)."""
from __future__ import annotations

import json

import pytest

from gitmem.cycle.budget import estimate_tokens
from gitmem.cycle.next_prompt import next_prompt
from gitmem.workspace import Workspace
from tests.support.fake_anthropic import count_tokens, messages_api
from tests.support.helpers import GitRepo

KEY = "sk-ant-test-key-for-the-fake"


def test_without_a_key_the_prompt_is_estimated_and_the_command_prints_the_librarys_data(
        memrepo: GitRepo, cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    shown = next_prompt(Workspace.at(memrepo.path), cycle=9)
    assert shown.counting == "estimate" and shown.failed is None
    assert shown.warnings == tuple(shown.request.warnings)
    rules = shown.request.parts[0]
    assert rules.tokens == estimate_tokens(f"## {rules.source}\n\n{rules.text}")
    printed = json.loads(cli(["context", "--json", "--cycle", "9"], cwd=memrepo.path).out)
    data = shown.to_dict()
    assert {**printed, "timestamp": None} == {**data, "timestamp": None}     # the clock moves between the two
    assert cli(["context", "--cycle", "9"], cwd=memrepo.path).out == shown.request.prompt_text()


@pytest.mark.parametrize("number", ["0", "-5"])
def test_context_refuses_a_cycle_number_no_cycle_can_have(memrepo: GitRepo, cli, number: str) -> None:
    """`context --cycle -5` printed a prompt saying "This is cycle -5." with exit 0; cycles count from 1."""
    done = cli(["context", "--cycle", number], cwd=memrepo.path)
    assert done.code == 2 and done.out == ""
    assert f"Invalid value for '--cycle': {number} is not in the range x>=1." in done.err


@pytest.mark.parametrize("broken", [False, True])
def test_with_a_key_the_prompt_is_counted_exactly_until_the_count_fails(
        memrepo: GitRepo, monkeypatch: pytest.MonkeyPatch, broken: bool) -> None:
    calls: list[int] = []
    with messages_api(count_tokens(calls, broken)) as url:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        shown = next_prompt(Workspace.at(memrepo.path))
    rules = shown.request.parts[0]
    if broken:
        assert shown.counting == "estimate" and len(calls) >= 1
        assert shown.warnings[0].startswith("exact token count unavailable (") and KEY not in shown.warnings[0]
        assert shown.warnings[0].endswith("); using the estimate") and shown.warnings[1:] == shown.request.warnings
        assert rules.tokens == estimate_tokens(f"## {rules.source}\n\n{rules.text}")
    else:
        assert shown.counting == "exact" and shown.failed is None
        assert len(calls) == len(shown.request.parts) + 1
        assert rules.tokens == len(f"## {rules.source}\n\n{rules.text}".split())


def test_offline_never_asks_the_api_even_with_a_key(memrepo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    with messages_api(count_tokens(calls, False)) as url:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        shown = next_prompt(Workspace.at(memrepo.path), offline=True)
    assert calls == [] and shown.counting == "estimate" and shown.failed is None


@pytest.mark.parametrize("argv", [["context"], ["context", "--json"], ["cycle", "--dry-run"]],
                         ids=["context", "context --json", "cycle --dry-run"])
def test_over_the_hard_limit_the_refusal_is_a_path_line_diagnostic_on_stderr(memrepo: GitRepo, cli,
                                                                               monkeypatch: pytest.MonkeyPatch,
                                                                               argv: list[str]) -> None:
    """GM706 was in `context --json`'s object only: stderr said `gitmem: the cycle context needs …` and never
    `path:line: GM706 …`, the shape every diagnostic has; the JSON object's violations were empty."""
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    memrepo.commit_files({"gitmem.yaml": memrepo.read("gitmem.yaml").replace("max_context_tokens: 60000",
                                                                             "max_context_tokens: 1000")}, "budget")
    done = cli(argv, cwd=memrepo.path)
    assert done.code in (1, 3), done.err
    diagnostics = [line for line in done.err.splitlines() if " GM706 " in line]
    assert len(diagnostics) == 1 and diagnostics[0].startswith("RULES.md:1: GM706 the cycle context needs "), done.err
    assert diagnostics[0].endswith(" [cycle-over-budget]")
    if "--json" in argv:
        answer = json.loads(done.out)
        assert [(v["path"], v["line"], v["code"]) for v in answer["violations"]] == [("RULES.md", 1, "GM706")]
