"""Real GitHub Copilot CLI for the tests: the npm package pinned in agent-cli/copilot, run in prompt mode against a
loopback fake of its model API.

Copilot CLI talks to GitHub's Copilot service unless it is given a model provider of its own ("BYOK", `copilot
help environment`): COPILOT_PROVIDER_BASE_URL, any URL, http on 127.0.0.1 included, with COPILOT_PROVIDER_TYPE
(openai by default), COPILOT_PROVIDER_API_KEY, COPILOT_PROVIDER_WIRE_API=responses (OpenAI's Responses API, through
the OpenAI JS SDK it bundles) and COPILOT_MODEL; COPILOT_OFFLINE=true makes it skip GitHub altogether (no login, no
telemetry, no update). So the fake is tests.support.fake_openai's Responses API: Copilot CLI posts to
`…/v1/responses` with `stream: true` and reads the turn from `response.completed`'s `output`.

Its MCP tools are offered to the model as `SERVER-TOOL` (`gitmem-log_entry`). The npm package is a loader that runs
a native binary of the platform's optional package, which unpacks its JavaScript into $XDG_CACHE_HOME/copilot
(or ~/.cache/copilot) on first start.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from tests.support import fake_openai as fo
from tests.support.npm_cache import Unavailable, npm_ci, skip_loudly

PACKAGE_DIR = Path(__file__).resolve().parents[2] / "agent-cli" / "copilot"
KEY = "copilot-provider-test-key"
MODEL = "gpt-5"
PROVIDER = ("COPILOT_PROVIDER_BASE_URL", "COPILOT_PROVIDER_API_KEY", "COPILOT_PROVIDER_WIRE_API", "COPILOT_MODEL",
            "COPILOT_OFFLINE", "COPILOT_AUTO_UPDATE", "CI")


def copilot_or_skip() -> Path:
    """The pinned Copilot CLI (`npm ci` of the committed lock, cached by its hash), or a loud skip. Its install
    script is not needed: the loader finds the platform package npm installed beside it."""
    try:
        home = npm_ci(PACKAGE_DIR, "copilot", "agent-cli/copilot", scripts=False, timeout=900)
    except Unavailable as why:
        skip_loudly("real GitHub Copilot CLI tests", why)
    return home / "node_modules" / ".bin" / "copilot"


def copilot_env(home: Path, base_url: str, path: str) -> dict[str, str]:
    """A plain environment for Copilot CLI pointed at the fake (`base_url`, ending in /v1)."""
    keep = {k: v for k, v in os.environ.items() if k in ("LANG", "LC_ALL", "TMPDIR")}
    return {**keep, "HOME": str(home), "PATH": path, "COPILOT_PROVIDER_BASE_URL": base_url,
            "COPILOT_PROVIDER_API_KEY": KEY, "COPILOT_PROVIDER_WIRE_API": "responses", "COPILOT_MODEL": MODEL,
            "COPILOT_OFFLINE": "true", "COPILOT_AUTO_UPDATE": "false", "CI": "true", "GIT_CONFIG_NOSYSTEM": "1"}


def script(*calls: tuple[str, dict[str, Any]], finish: str = "done") -> fo.Responder:
    """A model that makes `calls` in order, one a turn, each once its tool is offered, then finishes."""
    def respond(body: dict[str, Any]) -> list[fo.Item]:
        step = len(fo.outputs(body))
        if step < len(calls) and calls[step][0] in fo.tool_names(body):
            return [fo.function_call(calls[step][0], calls[step][1], f"call_{step}")]
        return [fo.message(finish)]
    return respond


def instructions(body: dict[str, Any]) -> str:
    """What the request tells the model before the user's words: system prompt and repository instructions."""
    return json.dumps([body.get("instructions"), body.get("input")], ensure_ascii=False)


