"""Real Codex for the session and cycle tests: the npm package pinned in agent-cli/codex (the lock the Action
installs too), run with `codex exec` against the loopback fake of the Responses API (tests/support/fake_openai.py).

`codex_binary()` runs `npm ci` once per lock file into the test cache ($GITMEM_TEST_CACHE) and returns the
`codex` shim, which runs the native binary of the optional platform package (`@openai/codex-linux-x64`); where
npm is missing or the registry cannot be reached it raises Unavailable, for a loud skip.

`machine_config(codex_home, url)` is the human's own Codex config, `$CODEX_HOME/config.toml`, pointing Codex at
the fake: Codex 0.169 ignores OPENAI_BASE_URL, and takes its endpoint from a model provider (this one without
WebSockets, which the fake does not speak; its `env_key` is OPENAI_API_KEY, as for OpenAI's own). Everything
about the project comes from what `gitmem init --agent codex` wrote, and its trust from the command it printed.

`script(*calls)` is a model that makes `calls` in order, one per turn, then finishes.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support import fake_openai as fo
from tests.support.npm_cache import Unavailable, npm_ci, skip_loudly

PACKAGE_DIR = Path(__file__).resolve().parents[2] / "agent-cli" / "codex"
BIN = Path(sys.executable).parent          # where this venv's `gitmem` is
MODEL = "gpt-5"                            # a model Codex knows to offer its function tools (exec_command, MCP)
KEY = "sk-proj-test-fake-openai-key"


def codex_binary() -> Path:
    """The pinned Codex, installed with `npm ci` from the committed lock, cached by the lock's hash. No install
    scripts: the native binary is a package of its own, which npm picks for this platform."""
    home = npm_ci(PACKAGE_DIR, "codex", "agent-cli/codex", scripts=False, timeout=900)
    return home / "node_modules" / ".bin" / "codex"


def codex_or_skip() -> Path:
    try:
        return codex_binary()
    except Unavailable as why:
        skip_loudly("real Codex tests", why)


def machine_config(codex_home: Path, url: str) -> None:
    """Point the human's Codex config at the fake (`url`), keeping what else it holds (the trust Codex saved)."""
    import tomlkit

    codex_home.mkdir(parents=True, exist_ok=True)
    path = codex_home / "config.toml"
    doc = tomlkit.parse(path.read_text()) if path.exists() else tomlkit.document()
    doc.update({"model": MODEL, "model_provider": "fake", "check_for_update_on_startup": False})
    providers = doc.setdefault("model_providers", tomlkit.table(is_super_table=True))
    providers["fake"] = {"name": "fake Responses API", "base_url": url, "env_key": "OPENAI_API_KEY",
                         "wire_api": "responses", "supports_websockets": False, "request_max_retries": 0,
                         "stream_max_retries": 0}
    path.write_text(tomlkit.dumps(doc))


def codex_env(home: Path, codex: Path, *, key: bool = True) -> dict[str, str]:
    """Codex's environment: a private HOME and CODEX_HOME, this venv's `gitmem` and Codex on PATH, the provider
    key (unless `key` is false), a git identity."""
    keep = {k: v for k, v in os.environ.items()
            if k in ("LANG", "LC_ALL", "TMPDIR", "XDG_STATE_HOME") or k.startswith(("COVERAGE", "COV_CORE"))}
    env = {**keep, "HOME": str(home), "CODEX_HOME": str(home / ".codex"),
           "PATH": os.pathsep.join([str(BIN), str(codex.parent), "/usr/local/bin:/usr/bin:/bin"]),
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "Ada Human", "GIT_AUTHOR_EMAIL": "ada@example.com",
           "GIT_COMMITTER_NAME": "Ada Human", "GIT_COMMITTER_EMAIL": "ada@example.com"}
    return {**env, "OPENAI_API_KEY": KEY} if key else env


def printed_trust(init_output: str) -> list[str]:
    """The trust command `gitmem init --agent codex` printed, as argv."""
    import shlex

    found = re.search(r"trust the project in Codex once, .*?: `([^`]+)`", init_output)
    assert found is not None, init_output
    return shlex.split(found.group(1))


def script(*calls: tuple[str, dict[str, Any]], finish: str = "done") -> fo.Responder:
    """A model that makes `calls` (name, arguments) in order, one per turn, then says `finish`."""
    def respond(body: dict[str, Any]) -> list[fo.Item]:
        made = len(fo.outputs(body))
        if made < len(calls):
            name, arguments = calls[made]
            return [fo.function_call(name, arguments, f"call_{made}")]
        return [fo.message(finish)]
    return respond


def events(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def run_codex(codex: Path, cwd: Path, env: dict[str, str], *args: str, prompt: str = "",
              timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(codex), *args], cwd=cwd, env=env, input=prompt, capture_output=True, text=True,
                          timeout=timeout)
