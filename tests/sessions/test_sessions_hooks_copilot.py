"""The session hooks as GitHub Copilot CLI runs them (`.github/hooks/gitmem.json`, written by `gitmem init --agent
copilot`), fed the JSON it sends, as seen from Copilot CLI 1.0.102: sessionStart `{"sessionId", "timestamp",
"cwd", "source", "initialPrompt"}`, agentStop `{"sessionId", "timestamp", "cwd", "transcriptPath", "stopReason",
"stop_hook_active"}`. Copilot CLI reads a top-level `additionalContext` at session start and Claude Code's block
answer at stop; the real CLI's run is tests/e2e/test_copilot_cli.py."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from gitmem.memory_writer import MemoryWriter
from gitmem.scaffold.agent_clis import COPILOT_HOOKS, COPILOT_HOOKS_FILE
from gitmem.scaffold.init import init
from tests.sessions.test_sessions_hooks import commit_all
from tests.support.helpers import AGENT, GitRepo
from tests.support.sessions import GITMEM


def copilot_hook(argv: list[str], cwd: Path, payload: dict[str, Any]) -> dict[str, Any] | None:
    environment = {k: v for k, v in os.environ.items() if k not in ("GITMEM_CYCLE", "CLAUDE_PROJECT_DIR")}
    done = subprocess.run([str(GITMEM), "hook", *argv], input=json.dumps(payload), cwd=cwd, env=environment,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if done.stdout.strip() else None


def test_copilot_gets_the_memory_as_a_top_level_additional_context(memrepo: GitRepo) -> None:
    memory = MemoryWriter(memrepo.ws(), author_email=AGENT[1])
    memory.add_now_block(did="shipped hello.py", human="nothing", next="write its tests", cycle=1)
    commit_all(memrepo, "cycle 1", AGENT)
    answer = copilot_hook(["session-start", "--host", "copilot"], memrepo.path,
                          {"sessionId": "c-1", "timestamp": 1, "cwd": str(memrepo.path), "source": "new",
                           "initialPrompt": "hi"})
    assert answer is not None and set(answer) == {"additionalContext"}
    assert "shipped hello.py" in answer["additionalContext"]


def test_copilots_stop_blocks_once_by_its_session_id(memrepo: GitRepo) -> None:
    start = {"sessionId": "c-2", "timestamp": 1, "cwd": str(memrepo.path), "source": "new"}
    copilot_hook(["session-start", "--host", "copilot"], memrepo.path, start)
    (memrepo.path / "notes.txt").write_text("changed in the session\n")
    stop = {"sessionId": "c-2", "timestamp": 2, "cwd": str(memrepo.path), "transcriptPath": "/nowhere",
            "stopReason": "end_turn", "stop_hook_active": False}
    answer = copilot_hook(["stop"], memrepo.path, stop)
    assert answer is not None and answer["decision"] == "block" and "notes.txt" in answer["reason"]
    assert copilot_hook(["stop"], memrepo.path, {**stop, "stop_hook_active": True}) is None


def test_init_writes_copilots_hook_file_and_keeps_the_users_hooks(tmp_path: Path) -> None:
    mine = {"type": "command", "bash": "./scripts/lint.sh", "timeoutSec": 10}
    (tmp_path / ".github" / "hooks").mkdir(parents=True)
    (tmp_path / COPILOT_HOOKS_FILE).write_text(json.dumps({"version": 1, "hooks": {"agentStop": [mine]}}))
    report = init(tmp_path, ["copilot"])
    assert report.problems == [] and COPILOT_HOOKS_FILE in report.updated
    data = json.loads((tmp_path / COPILOT_HOOKS_FILE).read_text())
    assert data["version"] == 1
    assert [entry["bash"] for entry in data["hooks"]["agentStop"]] == ["./scripts/lint.sh", COPILOT_HOOKS[1][1]]
    assert [entry["bash"] for entry in data["hooks"]["sessionStart"]] == [COPILOT_HOOKS[0][1]]
    assert "--host copilot" in COPILOT_HOOKS[0][1]
    assert COPILOT_HOOKS_FILE in init(tmp_path, ["copilot"]).left_alone
