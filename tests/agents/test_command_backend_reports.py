"""The `command` backend out of the box: the chosen model reaches the agent CLI, the usage and cost it reports
reach the cycle's Evidence, and a cycle that logged nothing says why (a permission refusal, or nothing done)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from gitmem.agents.cli_output import read_output
from gitmem.errors import ExitCode
from gitmem.memory import log
from gitmem.report.evidence import read_evidence
from tests.support.helpers import GitRepo, script_command, with_command_backend

GITMEM = Path(sys.executable).parent / "gitmem"

# An agent CLI that prints what `claude -p --output-format json` prints, after doing what the test asks.
CLAUDE_LIKE = """
import json, os, subprocess, sys
sys.stdin.read()
GITMEM = sys.argv[2]
root = os.environ["GITMEM_ROOT"]
with open(os.path.join(root, "env.json"), "w") as handle:
    json.dump({k: os.environ.get(k) for k in ("ANTHROPIC_MODEL", "GITMEM_MODEL", "OPENAI_API_KEY")}, handle)
mode = sys.argv[1]
denials = []
if mode == "logs":
    subprocess.run([GITMEM, "log", "add", "--task", "write env.json", "--outcome", "built",
                    "--result", "env.json written"], check=True, cwd=root)
elif mode == "refused":
    denials = [{"tool_name": "Bash", "tool_use_id": "toolu_01",
                "tool_input": {"command": "gitmem log add --task t --outcome built --result r"}}]
print(json.dumps({"type": "result", "subtype": "success", "is_error": False, "num_turns": 3,
                  "result": "All done." if mode != "refused" else "I could not run gitmem: it needs approval.",
                  "total_cost_usd": 0.0421, "permission_denials": denials,
                  "usage": {"input_tokens": 1500, "output_tokens": 320, "cache_read_input_tokens": 900,
                            "cache_creation_input_tokens": 0, "server_tool_use": {"web_search_requests": 0}}}))
"""

TEXT_REFUSAL = """
import sys
sys.stdin.read()
print("I tried to log the cycle.")
print("Claude requested permissions to use Bash, but you haven't granted it yet.")
"""


def use_agent(tmp_path: Path, repo: GitRepo, source: str, *args: str, model: str | None = None) -> None:
    script = tmp_path / f"agent_{abs(hash(source))}.py"
    script.write_text(source)
    text = with_command_backend(repo.read("gitmem.yaml"), script_command(script, *args))
    if model:
        text = text.replace("  model: claude-sonnet-5-5", f"  model: {model}")
    repo.commit_files({"gitmem.yaml": text}, "use a command agent")


def last_entry(repo: GitRepo) -> log.LogEntry:
    return log.parse(repo.read("LOG.md")).entries[-1]


def test_the_chosen_model_reaches_the_agent_cli(tmp_path: Path, memrepo: GitRepo, cli) -> None:
    use_agent(tmp_path, memrepo, CLAUDE_LIKE, "logs", str(GITMEM), model="claude-haiku-5")
    assert cli(["cycle"], cwd=memrepo.path).code == ExitCode.OK
    assert json.loads(memrepo.read("env.json")) == {"ANTHROPIC_MODEL": "claude-haiku-5",
                                                    "GITMEM_MODEL": "claude-haiku-5", "OPENAI_API_KEY": None}
    assert cli(["cycle", "--model", "claude-opus-5-5"], cwd=memrepo.path).code == ExitCode.OK
    assert json.loads(memrepo.read("env.json"))["ANTHROPIC_MODEL"] == "claude-opus-5-5"


def test_the_model_is_set_by_gitmem_in_the_scrubbed_environment(tmp_path: Path, memrepo: GitRepo, cli,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The agent's environment is scrubbed (agent.pass_env), and the model variables come from the config, not
    from whatever the parent process had set."""
    monkeypatch.setenv("ANTHROPIC_MODEL", "claude-from-the-parent")
    monkeypatch.setenv("GITMEM_MODEL", "claude-from-the-parent")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-a-real-key-but-shaped-like-one-0123456789")
    use_agent(tmp_path, memrepo, CLAUDE_LIKE, "logs", str(GITMEM), model="claude-haiku-5")
    assert cli(["cycle"], cwd=memrepo.path).code == ExitCode.OK
    seen = json.loads(memrepo.read("env.json"))
    assert seen == {"ANTHROPIC_MODEL": "claude-haiku-5", "GITMEM_MODEL": "claude-haiku-5",
                    "OPENAI_API_KEY": None}


def test_usage_and_cost_the_cli_reports_go_into_evidence_as_for_the_anthropic_backend(tmp_path: Path,
                                                                                      memrepo: GitRepo, cli) -> None:
    use_agent(tmp_path, memrepo, CLAUDE_LIKE, "logs", str(GITMEM))
    result = cli(["cycle", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err
    report = json.loads(result.out)
    assert report["outcome"] == "built"
    assert report["tokens"] == {"input_tokens": 1500, "output_tokens": 320, "cache_read_input_tokens": 900,
                                "cache_creation_input_tokens": 0, "cost_usd": 0.0421}
    evidence = last_entry(memrepo).get("Evidence") or ""
    assert ("tokens: input 1500, output 320, cache_read_input_tokens 900, cache_creation_input_tokens 0, "
            "cost_usd 0.0421, total 2720") in evidence
    assert "runner: its final message: All done." in evidence
    facts = read_evidence(last_entry(memrepo).render())
    assert facts.usage is not None and facts.usage.total == 2720 and facts.cost == 0.0421


def test_a_permission_refusal_gets_the_permissions_fix(tmp_path: Path, memrepo: GitRepo, cli) -> None:
    use_agent(tmp_path, memrepo, CLAUDE_LIKE, "refused", str(GITMEM))
    result = cli(["cycle"], cwd=memrepo.path)
    assert result.code == ExitCode.OK
    entry = last_entry(memrepo)
    assert entry.outcome == "no-build"
    why = entry.get("Result") or ""
    assert "was refused 1 tool call(s) for lack of permission (Bash: gitmem log add --task t" in why
    assert "--allowedTools" in why and "Bash(gitmem log add:*)" in why
    assert "the runner logged no-build (Rule 0): `" in result.err and "--allowedTools" in result.err


def test_a_refusal_in_plain_text_output_is_found_too(tmp_path: Path, memrepo: GitRepo, cli) -> None:
    use_agent(tmp_path, memrepo, TEXT_REFUSAL)
    assert cli(["cycle"], cwd=memrepo.path).code == ExitCode.OK
    why = last_entry(memrepo).get("Result") or ""
    assert "for lack of permission (Claude requested permissions to use Bash" in why and "--allowedTools" in why


def test_a_run_that_simply_did_nothing_gets_a_different_message(tmp_path: Path, memrepo: GitRepo, cli) -> None:
    use_agent(tmp_path, memrepo, CLAUDE_LIKE, "idle", str(GITMEM))
    result = cli(["cycle"], cwd=memrepo.path)
    why = last_entry(memrepo).get("Result") or ""
    assert "exited 0 without running `gitmem log add` and with no permission refusal" in why
    assert "it ended with: All done." in why and "allowedTools" not in why
    assert "reads the prompt on stdin" in result.err


def test_reading_json_lines_from_claude_stream_json_and_codex_exec() -> None:
    stream = "\n".join(json.dumps(item) for item in [
        {"type": "system", "subtype": "init"},
        {"type": "assistant", "message": {"content": [{"type": "text", "text": "working"}]}},
        {"type": "result", "is_error": True, "result": "API Error: 529 overloaded", "num_turns": 1,
         "usage": {"input_tokens": 10, "output_tokens": 2}}])
    claude = read_output(stream)
    assert claude.error == "API Error: 529 overloaded" and claude.usage == {"input_tokens": 10, "output_tokens": 2}
    codex = read_output("\n".join(json.dumps(item) for item in [
        {"type": "thread.started"},
        {"type": "item.completed", "item": {"type": "agent_message", "text": "Logged the cycle."}},
        {"type": "turn.completed", "usage": {"input_tokens": 100, "cached_input_tokens": 40, "output_tokens": 9}},
        {"type": "turn.completed", "usage": {"input_tokens": 50, "cached_input_tokens": 0, "output_tokens": 1}}]))
    # OpenAI's input_tokens include the cached ones: gitmem keeps the uncached part apart, as Anthropic reports
    assert codex.usage == {"input_tokens": 110, "output_tokens": 10, "cache_read_input_tokens": 40}
    assert (codex.turns, codex.last_words, codex.structured) == (2, "Logged the cycle.", True)
    plain = read_output("did a thing\n\nall good\n", "warning: slow disk\n")
    assert (plain.usage, plain.refusals, plain.last_words, plain.structured) == ({}, [], "all good", False)
    assert read_output("{broken json").last_words == "{broken json"


def test_an_error_the_cli_reports_is_named(tmp_path: Path, memrepo: GitRepo, cli) -> None:
    erring = ("import json, sys\nsys.stdin.read()\nprint(json.dumps({'type': 'result', 'is_error': True, "
              "'result': 'API Error: 401 invalid x-api-key', 'num_turns': 1}))\n")
    use_agent(tmp_path, memrepo, erring)
    assert cli(["cycle"], cwd=memrepo.path).code == ExitCode.OK
    assert "reported an error: API Error: 401 invalid x-api-key" in (last_entry(memrepo).get("Result") or "")


def test_a_runner_cycle_is_never_marked_interactive_whatever_its_agent_writes(memrepo: GitRepo) -> None:
    from gitmem.cycle.runner import run_cycle
    from tests.support.cycle_support import WritingBackend

    def claims_a_session(memory, request) -> None:       # type: ignore[no-untyped-def]
        memory.add_log_entry(task="pose as a session", outcome="built", result="r", interactive=True)

    report = run_cycle(memrepo.ws(), WritingBackend(claims_a_session))
    entry = last_entry(memrepo)
    assert report.outcome == "built" and entry.get("Task") == "pose as a session"
    assert (entry.interactive, entry.get("Session")) == (False, None) and entry.get(log.STARTED)
