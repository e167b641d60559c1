"""The optional parts of gitmem (extras) and what to install for each: one place, so every command that
needs a missing part names the same install line.

The base package validates memory, runs the cycle with the `command` and `scripted` backends, closes the
day offline, searches history and runs the demo. `agent` adds the anthropic SDK; `agents` adds tomlkit, for the
TOML merge of `init --agent codex` (`gitmem mcp` needs no extra: gitmem serves the protocol itself);
`semantic` adds recall by meaning (wordllama's static model, read with numpy and tokenizers); `semantic-onnx`
adds onnxruntime to run a sentence encoder the user saved.
"""
from __future__ import annotations

from gitmem import install_command
from gitmem.config import ConfigError

# extra -> (the module it provides, what it is for)
EXTRAS = {
    "agent": ("anthropic", "the anthropic backend, exact token counts and the close worded by a model"),
    "agents": ("tomlkit", "the TOML merge of init --agent codex"),
    "semantic": ("wordllama", "hybrid recall by meaning"),
    "semantic-onnx": ("onnxruntime", "recall by meaning with a sentence encoder (recall.model: onnx:DIRECTORY)"),
}


class MissingExtra(ConfigError):
    """A command needs an extra that is not installed; the message is the line to run."""


def extra_install_line(extra: str) -> str:
    """The install line for `extra`: gitmem's one install command (the git URL at its pinned ref)."""
    return install_command(extra)


def installed(extra: str) -> bool:
    """True when the extra's module can be imported (checked without importing it: the SDK is slow to load)."""
    from importlib.util import find_spec

    module, _ = EXTRAS[extra]
    try:
        return find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def missing_extra_message(extra: str, what: str) -> str:
    """The sentence for a missing extra: what needs it, and exactly what to install."""
    module, _ = EXTRAS[extra]
    return f"{what} needs the {module} SDK, which is not installed: {extra_install_line(extra)}"


def require(extra: str, what: str) -> None:
    """Raise MissingExtra (exit 2) with the install line when `extra` is not installed."""
    if not installed(extra):
        raise MissingExtra(missing_extra_message(extra, what))
