"""What `gitmem init --agent codex` sets in gitmem.yaml for scheduled cycles, and the one step it leaves to the human.

The recipe: the `command` backend with `codex exec`, and Codex's provider keys in `agent.pass_env` (the template
passes only ANTHROPIC_API_KEY, so without them Codex starts with no key). It is written into the template's
gitmem.yaml in place (the commented `# backend:` line chosen, a `command:` line under the commented Claude Code
one, the keys under `pass_env:`), every other line and comment kept; a gitmem.yaml that already chooses a
backend or a command, or has another shape, is left alone and the step says what to set.

The command, `codex exec --json --trust --sandbox danger-full-access -`:
- `--json`: events on stdout, which gitmem.agents.cli_output reads for usage and the reason a run failed;
- `--trust`: a runner's checkout (CI, gitmem's sandbox with its fresh CODEX_HOME) is a project Codex has never
  seen, and Codex ignores an untrusted project's `.codex/config.toml`, so the gitmem MCP server and
  `allow_login_shell = false` would be gone. That file is a protected path: a cycle cannot change it;
- `--sandbox danger-full-access`: `codex exec` defaults to a read-only sandbox, where `gitmem log add` cannot
  write LOG. Codex's own sandbox cannot run inside gitmem's bubblewrap box either: it refuses to put its sandbox
  helper under a temporary CODEX_HOME, and the box's HOME is in its private /tmp. gitmem's box (agent.sandbox)
  is the sandbox; the runner's guard holds with or without it;
- `-`: the prompt on stdin.
"""
from __future__ import annotations

import re
import shlex
from pathlib import Path

from gitmem.config import CONFIG_NAME, ConfigError, parse_config

CODEX_CYCLE_COMMAND = "codex exec --json --trust --sandbox danger-full-access -"
# Codex reads its key from these (OPENAI_API_KEY for the API, CODEX_API_KEY its own name for the same).
CODEX_KEYS = ("OPENAI_API_KEY", "CODEX_API_KEY")
_BACKEND_RE = re.compile(r"(?m)^  # backend: anthropic( +#.*)?$")
_COMMAND_RE = re.compile(r"(?m)^  # command: .*$")
_PASS_ENV = "  pass_env:\n"


def trust_step(root: Path) -> str:
    """The one step Codex requires of the human: trusting the project, without which Codex ignores its
    `.codex/config.toml` (no gitmem server, a login shell that cannot find `gitmem`)."""
    where = shlex.quote(str(root.resolve()))
    return (f"trust the project in Codex once, so it reads .codex/config.toml: `codex exec --trust -C {where} "
            "\"Run gitmem status\"` (or answer yes when `codex` asks to trust the folder)")


def cycle_step() -> str:
    """What to set by hand when gitmem.yaml could not take the recipe."""
    return (f"for scheduled cycles with Codex, set in {CONFIG_NAME}: agent.backend: command, agent.command: "
            f"{CODEX_CYCLE_COMMAND}, and add {' and '.join(CODEX_KEYS)} to agent.pass_env")


def with_recipe(old: str) -> str | None:
    """gitmem.yaml's text with the Codex recipe, or None when it already has it or cannot take it (then
    `cycle_step()` says what to set). Raises ConfigError when the result would not load."""
    try:
        config = parse_config(old.encode("utf-8"))
    except ConfigError:
        return None
    agent = config.agent
    if agent.command and agent.command != CODEX_CYCLE_COMMAND or agent.backend not in ("", "command"):
        return None                      # the human chose something else: theirs stays
    missing = [key for key in CODEX_KEYS if key not in agent.pass_env]
    if agent.command == CODEX_CYCLE_COMMAND and agent.backend == "command" and not missing:
        return None
    new = old
    if not agent.backend:
        if not _BACKEND_RE.search(new):
            return None
        new = _BACKEND_RE.sub(lambda found: "  backend: command" + (found.group(1) or ""), new, count=1)
    if not agent.command:
        found = _COMMAND_RE.search(new)
        if found is None:
            return None
        line = "  command: " + CODEX_CYCLE_COMMAND
        new = new[:found.end()] + "\n  # Codex (gitmem init --agent codex): its JSON events, this project's " \
            ".codex/config.toml trusted, gitmem's sandbox as the only one:\n" + line + new[found.end():]
    if missing:
        if new.count(_PASS_ENV) != 1:
            return None
        new = new.replace(_PASS_ENV, _PASS_ENV + "".join(f"    - {key}\n" for key in missing), 1)
    result = parse_config(new.encode("utf-8")).agent
    if (result.backend, result.command) != ("command", CODEX_CYCLE_COMMAND) or \
            any(key not in result.pass_env for key in CODEX_KEYS):
        return None
    return new
