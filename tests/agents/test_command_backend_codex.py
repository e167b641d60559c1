"""The `command` backend reading `codex exec --json`: a run that failed is named by Codex's own reason
(`turn.failed`), not by its stderr, and a withheld key is named as one; shell commands that could not start
(exit 127) are told from a run that never tried; tokens are counted as OpenAI reports them (its input includes
the cached tokens). An agent CLI that prints what Codex 0.169 prints stands in for it here; tests/e2e/test_codex.py
runs the real one."""
from __future__ import annotations

import json

from gitmem.agents.cli_output import read_output
from gitmem.errors import ExitCode
from gitmem.report.evidence import read_evidence
from tests.agents.test_command_backend_reports import last_entry, use_agent
from tests.support.helpers import GitRepo

# What `codex exec --json -` prints, by mode (the events and fields of Codex 0.169).
CODEX_LIKE = """
import json, sys
sys.stdin.read()
mode = sys.argv[1]
def say(**event):
    print(json.dumps(event), flush=True)
say(type="thread.started", thread_id="t1")
say(type="turn.started")
if mode == "no-key":
    say(type="error", message="Missing environment variable: `OPENAI_API_KEY`.")
    say(type="turn.failed", error={"message": "Missing environment variable: `OPENAI_API_KEY`."})
    print("WARNING: proceeding, even though we could not create PATH aliases", file=sys.stderr)
    sys.exit(1)
say(type="error", message="Reconnecting... 2/5 (stream disconnected before completion)")
if mode == "not-found":
    for command in ("gitmem log add --task t --outcome built --result r", "gitmem now add --did d"):
        say(type="item.completed", item={"id": "item_1", "type": "command_execution",
            "command": f"/bin/bash -lc '{command}'", "exit_code": 127, "status": "failed",
            "aggregated_output": "/bin/bash: line 1: gitmem: command not found\\n"})
say(type="item.completed", item={"id": "item_2", "type": "agent_message", "text": "I could not log."})
say(type="turn.completed", usage={"input_tokens": 2480, "cached_input_tokens": 2000, "cache_write_input_tokens": 0,
                                  "output_tokens": 150, "reasoning_output_tokens": 40})
"""


def test_a_failed_run_is_named_by_codexs_reason_and_the_withheld_key(tmp_path, memrepo: GitRepo, cli) -> None:
    use_agent(tmp_path, memrepo, CODEX_LIKE, "no-key")
    result = cli(["cycle"], cwd=memrepo.path)
    assert result.code == ExitCode.SALVAGED, result.err       # the agent failed: a no-build entry says why
    why = " ".join(str(last_entry(memrepo).render()).split())
    assert "exited with code 1: Missing environment variable: `OPENAI_API_KEY`." in why
    assert "(OPENAI_API_KEY is withheld from the agent unless agent.pass_env in gitmem.yaml names it)" in why
    assert "PATH aliases" not in why, "the stderr warning is not the reason"


def test_gitmem_calls_that_could_not_start_are_told_from_a_run_that_never_tried(tmp_path, memrepo: GitRepo,
                                                                               cli) -> None:
    use_agent(tmp_path, memrepo, CODEX_LIKE, "not-found")
    assert cli(["cycle"], cwd=memrepo.path).code == ExitCode.OK
    why = last_entry(memrepo).get("Result") or ""
    assert "ran 2 shell command(s) whose program was not found (exit 127): /bin/bash -lc 'gitmem log add" in why
    assert "gitmem: command not found" in why and "allow_login_shell = false" in why
    assert "without running `gitmem log add`" not in why


def test_a_codex_run_that_never_tried_gets_its_last_words(tmp_path, memrepo: GitRepo, cli) -> None:
    use_agent(tmp_path, memrepo, CODEX_LIKE, "idle")
    assert cli(["cycle"], cwd=memrepo.path).code == ExitCode.OK
    idle = last_entry(memrepo).get("Result") or ""
    assert "exited 0 without running `gitmem log add`" in idle and "exit 127" not in idle
    assert "it ended with: I could not log." in idle


def test_openai_tokens_are_counted_once(tmp_path, memrepo: GitRepo, cli) -> None:
    use_agent(tmp_path, memrepo, CODEX_LIKE, "idle")
    report = json.loads(cli(["cycle", "--json"], cwd=memrepo.path).out)
    assert report["tokens"] == {"input_tokens": 480, "output_tokens": 150, "cache_read_input_tokens": 2000}
    usage = read_evidence(last_entry(memrepo).render()).usage
    assert usage is not None and usage.total == 2480 + 150, "what OpenAI billed: input (cached included) + output"
    assert usage.cache_rate == 2000 / 2480


def test_a_retry_codex_recovered_from_is_no_error_and_cache_writes_stay_apart() -> None:
    events = [{"type": "error", "message": "Reconnecting... 2/5"},
              {"type": "turn.completed", "usage": {"input_tokens": 1000, "cached_input_tokens": 600,
                                                   "cache_write_input_tokens": 300, "output_tokens": 20}}]
    reading = read_output("\n".join(json.dumps(e) for e in events))
    assert reading.error == ""
    assert reading.usage == {"input_tokens": 100, "output_tokens": 20, "cache_read_input_tokens": 600,
                             "cache_creation_input_tokens": 300}
    gave_up = read_output(json.dumps({"type": "error", "message": "stream disconnected: connection refused"}))
    assert gave_up.error == "stream disconnected: connection refused"
