"""Real OpenCode for the session and cycle tests: the npm package pinned in agent-cli/opencode, run with
`opencode run` against the loopback fake of the Chat Completions API (tests/support/fake_chat_completions.py).

`opencode-ai` is a launcher whose install script copies the native binary out of the platform package npm picked
(`opencode-linux-x64` here: its postinstall.mjs), so it is installed with its scripts. The model is a provider of
the human's own, given in OPENCODE_CONFIG_CONTENT (a whole config in one variable, merged over the project's
`opencode.json`), on `@ai-sdk/openai-compatible`, which the binary bundles (packages/opencode/src/provider/
provider.ts, BUNDLED_PROVIDERS), so nothing is installed at run time; its `baseURL` and `apiKey` are
`{env:OPENAI_BASE_URL}` and `{env:OPENAI_API_KEY}`, which OpenCode substitutes from its environment
(packages/opencode/src/config/config.ts): in a cycle the runner's key proxy stands in for both. The npm registry is
pointed at a closed port, so a download the binary tried would fail the test instead of passing unseen.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from tests.support.npm_cache import Unavailable, npm_ci, skip_loudly

PACKAGE_DIR = Path(__file__).resolve().parents[2] / "agent-cli" / "opencode"
KEY = "sk-opencode-test-fake-openai-key"
MODEL = "fake/fake-model"
PROVIDER = {"provider": {"fake": {"npm": "@ai-sdk/openai-compatible", "name": "fake Chat Completions API",
                                  "options": {"baseURL": "{env:OPENAI_BASE_URL}", "apiKey": "{env:OPENAI_API_KEY}"},
                                  "models": {"fake-model": {"name": "fake model", "tool_call": True}}}},
            "model": MODEL, "autoupdate": False, "share": "disabled"}
# No update check, no models.dev fetch, no default plugins or language servers to install.
QUIET = {"OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_MODELS_FETCH": "1",
         "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1", "OPENCODE_DISABLE_LSP_DOWNLOAD": "1"}
PROMPT = "Do the cycle described on stdin."
# `opencode run` appends what stdin holds to the message; `--format json` prints its events, each model step's
# tokens among them (gitmem.agents.cli_output).
CYCLE_COMMAND = f"opencode run --format json '{PROMPT}'"
# What a cycle passes into the box (agent.pass_env): the key, which the runner stands in for, and the provider.
PASS_ENV = ("OPENAI_API_KEY", "OPENCODE_CONFIG_CONTENT", "npm_config_registry", *QUIET)


def opencode_or_skip() -> Path:
    """The pinned OpenCode (`npm ci` of the committed lock, cached by its hash), or a loud skip."""
    try:
        home = npm_ci(PACKAGE_DIR, "opencode", "agent-cli/opencode", scripts=True, timeout=900)
    except Unavailable as why:
        skip_loudly("real OpenCode tests", why)
    return home / "node_modules" / ".bin" / "opencode"


def opencode_env(home: Path, base_url: str, path: str) -> dict[str, str]:
    keep = {k: v for k, v in os.environ.items() if k in ("LANG", "LC_ALL", "TMPDIR")}
    return {**keep, **QUIET, "HOME": str(home), "PATH": path, "OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": KEY,
            "OPENCODE_CONFIG_CONTENT": json.dumps(PROVIDER), "npm_config_registry": "http://127.0.0.1:9/",
            "GIT_CONFIG_NOSYSTEM": "1"}
