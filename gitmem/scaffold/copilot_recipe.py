"""What GitHub Copilot CLI needs beyond the files `gitmem init --agent copilot` writes: trusting the folder, and
the command for scheduled cycles (said as a step, never written: the human picks the model provider).

Copilot CLI loads a workspace's MCP servers (`.mcp.json`, `.github/mcp.json`) and hooks only in a folder the human
trusted (its log says "Loading workspace MCP sources in prompt mode (folder is trusted or opt-in set)"); the trust
is kept in its own config (`trustedFolders`), outside the repository, so init can only name the step.

Scheduled cycles (the `command` backend) run `COPILOT_CYCLE_COMMAND` with the prompt on stdin, which Copilot CLI
reads in prompt mode:
- `--trust-folder`: trusts the checkout for that one run only, so `.mcp.json` and its gitmem server load in a
  runner's fresh checkout, and no trust is saved;
- `--allow-all-tools`: prompt mode requires it (nothing can answer a confirmation); `--no-ask-user` likewise;
- `--no-auto-update`: the pinned release runs, never one downloaded in the background.
The model: a runner never passes a GitHub token to the agent (gitmem.secrets.agent_environment), so Copilot's
GitHub-hosted models are out of reach of a cycle; its own provider setting (BYOK: COPILOT_PROVIDER_BASE_URL with
COPILOT_PROVIDER_API_KEY, and COPILOT_OFFLINE=true so it makes no call to GitHub) is what a cycle uses, and the
key goes through the runner's loopback endpoint (gitmem.agents.key_stand_in).
"""
from __future__ import annotations

import shlex
from pathlib import Path

from gitmem.config import CONFIG_NAME

COPILOT_CYCLE_COMMAND = "copilot --trust-folder --allow-all-tools --no-ask-user --no-auto-update -s"
# What a cycle's environment needs from the runner's: the provider and its key (agent.pass_env).
COPILOT_PASS_ENV = ("COPILOT_PROVIDER_BASE_URL", "COPILOT_PROVIDER_TYPE", "COPILOT_PROVIDER_WIRE_API",
                    "COPILOT_PROVIDER_API_KEY", "COPILOT_MODEL", "COPILOT_OFFLINE")


def folder_trust_step(root: Path) -> str:
    """Trusting the folder, without which Copilot CLI loads neither `.mcp.json` (no gitmem server) nor the
    repository's hooks."""
    where = shlex.quote(str(root.resolve()))
    return (f"trust the folder in GitHub Copilot CLI once, so it loads .mcp.json and .github/hooks: start `copilot` "
            f"in {where} and "
            "answer yes when it asks to trust the folder (or run `copilot --trust-folder …` each time)")


def scheduled_cycle_step() -> str:
    """What to set for scheduled cycles with Copilot CLI."""
    return (f"for scheduled cycles with GitHub Copilot CLI, set in {CONFIG_NAME}: agent.backend: command, "
            f"agent.command: {COPILOT_CYCLE_COMMAND}, and add {', '.join(COPILOT_PASS_ENV)} to agent.pass_env "
            "(a cycle never gets a GitHub token, so it runs Copilot CLI on your own model provider)")
