"""Choose the agent backend: `--agent NAME`, else agent.backend in gitmem.yaml, else anthropic when a key is set.

Backends load lazily, so choosing `scripted` or `command` never imports the anthropic SDK.
"""
from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from typing import Any

from gitmem.agents.base import Backend
from gitmem.config import BACKENDS, ConfigError

# name -> (module, class). `command` is gitmem.agents.command.CommandBackend (the runner's side).
_WHERE = {"anthropic": ("gitmem.agents.anthropic", "AnthropicBackend"),
          "command": ("gitmem.agents.command", "CommandBackend"),
          "scripted": ("gitmem.agents.scripted", "ScriptedBackend")}


def how_to_choose() -> str:
    """The ways to choose a backend. The anthropic one needs the `agent` extra: where it is not installed, the
    hint says so with its install line (`gitmem.extras`), rather than offer a backend that cannot start."""
    from gitmem import extras

    anthropic = "set ANTHROPIC_API_KEY for the anthropic backend"
    if not extras.installed("agent"):
        anthropic += f" (it needs the anthropic SDK, not installed here: {extras.extra_install_line('agent')})"
    return (f"choose one: {anthropic}, or set agent.backend in gitmem.yaml (anthropic, command with agent.command, "
            "or scripted with agent.script), or pass --agent NAME")


class BackendChoiceError(ConfigError):
    """No backend is chosen, or the chosen one cannot be set up; the message says how to choose."""


def backend_name(config: Any, name_override: str | None = None, *, environ: Mapping[str, str] | None = None) -> str:
    environ = os.environ if environ is None else environ
    name = (name_override or config.agent.backend or "").strip()
    if not name:
        if environ.get("ANTHROPIC_API_KEY"):
            return "anthropic"
        raise BackendChoiceError(f"no agent backend chosen and ANTHROPIC_API_KEY is not set; {how_to_choose()}")
    if name not in BACKENDS:
        raise BackendChoiceError(f"unknown agent backend {name!r}; {how_to_choose()}")
    if name == "command" and not config.agent.command:
        raise BackendChoiceError("the command backend needs agent.command in gitmem.yaml: an agent CLI that reads the "
                                 "prompt on stdin, such as the Claude Code command in the template's gitmem.yaml")
    return name


def backend_for(config: Any, name_override: str | None = None, *, environ: Mapping[str, str] | None = None,
                **options: Any) -> Backend:
    """Build the chosen backend. `options` go to its constructor (e.g. `script=` for scripted, `client=`)."""
    name = backend_name(config, name_override, environ=environ)
    if name == "scripted" and not config.agent.script and not options.get("script"):
        raise BackendChoiceError("the scripted backend needs a script: set agent.script in gitmem.yaml "
                                 "(a YAML file of tool calls per cycle)")
    if name == "anthropic":
        from gitmem import extras

        extras.require("agent", "the anthropic backend")
    module_name, class_name = _WHERE[name]
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise BackendChoiceError(f"the {name} backend is not available ({err}); {how_to_choose()}") from None
    factory = getattr(module, class_name, None)
    if factory is None:
        raise BackendChoiceError(f"{module_name} has no {class_name}; the {name} backend is not available")
    backend: Backend = factory(config, **options)
    return backend
