"""Real Qwen Code for the session and cycle tests: the npm package pinned in agent-cli/qwen-code, run with
`qwen -p` against the loopback fake of the Chat Completions API (tests/support/fake_chat_completions.py).

Qwen Code chooses its OpenAI auth type by itself when OPENAI_API_KEY, OPENAI_MODEL and OPENAI_BASE_URL are all
set (packages/cli/src/utils/modelConfigUtils.ts in its source, as bundled in 0.24.4), and OpenAI's SDK then sends
`POST {OPENAI_BASE_URL}/chat/completions` with the key as a bearer token. Nothing else is needed in its HOME.
"""
from __future__ import annotations

import os
from pathlib import Path

from tests.support.npm_cache import Unavailable, npm_ci, skip_loudly

PACKAGE_DIR = Path(__file__).resolve().parents[2] / "agent-cli" / "qwen-code"
KEY = "sk-qwen-test-fake-openai-key"
MODEL = "qwen-fake"
PROMPT = "Do the cycle described on stdin."
# The scheduled cycle's command: `--yolo` runs the tools without asking, as `gemini --yolo` does, and skips the
# approval of the project's MCP servers (packages/cli/src/config/config.ts: no pending servers in yolo mode).
CYCLE_COMMAND = f"qwen --yolo --output-format json -p '{PROMPT}'"
# What a cycle passes into the box (agent.pass_env): the key, which the runner stands in for, and the model,
# without which Qwen Code has no auth type in the box's fresh HOME ("No auth type is selected").
PASS_ENV = ("OPENAI_API_KEY", "OPENAI_MODEL", "QWEN_CODE_SUPPRESS_YOLO_WARNING", "CI")


def qwen_or_skip() -> Path:
    """The pinned Qwen Code (`npm ci` of the committed lock, cached by its hash), or a loud skip."""
    try:
        home = npm_ci(PACKAGE_DIR, "qwen-code", "agent-cli/qwen-code", scripts=False, timeout=900)
    except Unavailable as why:
        skip_loudly("real Qwen Code tests", why)
    return home / "node_modules" / ".bin" / "qwen"


def qwen_env(home: Path, base_url: str, path: str) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if k in ("LANG", "LC_ALL", "TMPDIR")}
    return {**keep, "HOME": str(home), "PATH": path, "OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": KEY,
            "OPENAI_MODEL": MODEL, "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1", "CI": "true", "GIT_CONFIG_NOSYSTEM": "1"}
