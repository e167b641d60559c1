"""`gitmem init --agent claude|codex|copilot|cursor|gemini|opencode|qwen`: wire an agent CLI to the memory,
merged into the user's files.

The protocol is one managed block, written once, in `AGENTS.md`, which Codex, OpenCode and Qwen Code read, Claude
Code reads through an import and Gemini CLI through its settings; a CLI gets a file of its own only where it needs
one:
- claude: `.claude/settings.json` (the session hooks, the gitmem MCP server enabled by name, and an allow-list
  of the memory-writing and reading subcommands and MCP tools, never `gitmem decision answer`), `.mcp.json`,
  and a one-line managed block `@AGENTS.md` in `CLAUDE.md`: Claude Code reads CLAUDE.md, and AGENTS.md only in
  a folder without one (from 2.1.277; the release gitmem pins is older), and expands `@path` imports
  (code.claude.com/docs/en/memory, "Import additional files"). An older init's protocol block in CLAUDE.md
  becomes that line, in place;
- codex: the protocol block in `AGENTS.md`; the server in `.codex/config.toml` with what Codex
  needs to use it unattended (`codex_server`), and a non-login shell so `gitmem` stays on PATH; the Codex
  command for scheduled cycles in gitmem.yaml (gitmem.scaffold.codex_recipe); and, as a step for the human, the
  command that trusts the project, without which Codex ignores `.codex/config.toml`;
- copilot: the server in `.mcp.json`, the workspace file GitHub Copilot CLI reads (as Claude Code does; the entry
  is the same), the protocol block in `AGENTS.md`, which it reads as repository instructions (`copilot
  instruction list` names it), and the session hooks in `.github/hooks/gitmem.json` (its sessionStart and
  agentStop events, gitmem.sessions.hooks); and, as a step for the human, trusting the folder, without which
  Copilot CLI loads no workspace MCP server or hook (gitmem.scaffold.copilot_recipe);
- cursor: the server in `.cursor/mcp.json`, and the protocol as a rule, `.cursor/rules/gitmem.mdc`;
- gemini: in `.gemini/settings.json` the server, trusted (its memory tools run without a confirmation, as
  Claude Code's allow-list lets them; none of them answers a decision), and `AGENTS.md` among the context files
  (`context.fileName`, kept with GEMINI.md, or with the names the user set: geminicli.com/docs/cli/gemini-md); an
  older init's protocol block in `GEMINI.md` is taken out, the rest of that file kept;
- opencode: the server in `opencode.json` (`opencode_server`), and the protocol block in `AGENTS.md`, which
  OpenCode reads as its project instructions;
- qwen: in `.qwen/settings.json` the server, trusted and always loaded (`qwen_server`), the settings version
  Qwen Code would otherwise write in on its first run, and AGENTS.md among the context files when the user named
  others (Qwen Code reads QWEN.md and AGENTS.md by default); and, as a step for the human, the command that
  approves the server, without which Qwen Code skips a project's MCP servers outside `--yolo`.

Nothing is overwritten: JSON and TOML get only the missing keys (TOML through tomlkit, and JSON with comments
through `gitmem.scaffold.jsonc`, both of which keep comments and layout), and a managed block, fenced by
`<!-- gitmem:begin NAME -->` and `<!-- gitmem:end NAME -->`, is added or brought up to date without touching
the text around it. Running it twice changes nothing. Generated
files are committed and shared, so they name no absolute path and do not count on `gitmem` being on PATH: every
hook and MCP entry runs the committed launcher `.gitmem/gitmem` (gitmem.sessions.launcher: the repository's
`.venv`, then PATH, then `python3 -m gitmem`), which every agent gets. Entries an older `init` wrote with a bare
`gitmem` are brought up to date; any other entry of the user's is kept.

When AGENTS.md or CLAUDE.md is itself the RULES file (`rules: AGENTS.md`, `rules: CLAUDE.md`), its block must not
break RULES: it goes into RULES' free text, above `## Proven rules`, and the result is checked as RULES before it
is written.
"""
from __future__ import annotations

import copy
import json
import os
import posixpath
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from gitmem.config import CONFIG_NAME, Config, load_config
from gitmem.config.nesting import TooDeep, parsing, within_depth
from gitmem.confined import files
from gitmem.cycle.budget import CYCLE_ENV
from gitmem.errors import GitmemError
from gitmem.scaffold import codex_recipe, copilot_recipe, jsonc
from gitmem.scaffold.line_ends import with_own_line_ends
from gitmem.sessions import launcher
from gitmem.sessions.launcher import LAUNCHER, launcher_command, launcher_shell
from gitmem.sessions.protocol import AGENT_COMMANDS, LAUNCHED, SERVER, SHARED, protocol_text, tool_names

AGENTS = ("claude", "codex", "copilot", "cursor", "gemini", "opencode", "qwen")
BLOCK = "protocol"
SHARED_FILE = "AGENTS.md"
IMPORT_SHARED = f"@{SHARED_FILE}"      # Claude Code's import of the shared block
GEMINI_CONTEXT_DEFAULT = ("GEMINI.md",)  # Gemini CLI's context file names when its settings name none
HOOKS = (("SessionStart", launcher_shell("hook", "session-start")), ("Stop", launcher_shell("hook", "stop")))
SERVER_SPEC = {"command": "sh", "args": launcher_command("mcp")[1:]}
# Cursor may start servers from the home directory, but expands ${workspaceFolder}; where a host does not,
# `gitmem mcp` ignores the unexpanded --root.
CURSOR_SPEC = {"command": "sh", "args": [f"${{workspaceFolder}}/{LAUNCHER}", "mcp", "--root", "${workspaceFolder}"]}
# What an older `init` wrote, which calls a bare `gitmem` from PATH: replaced, being gitmem's and not the user's.
BARE_HOOKS = {"gitmem hook session-start": HOOKS[0][1], "gitmem hook stop": HOOKS[1][1]}
BARE_SPECS = ({"command": "gitmem", "args": ["mcp"]},
              {"command": "gitmem", "args": ["mcp", "--root", "${workspaceFolder}"]})
GEMINI_SPEC = {**SERVER_SPEC, "trust": True}
# OpenCode's project config, and its local MCP server (packages/opencode/src/config/config.ts, `McpLocal`: the
# command and its arguments as one array; `timeout` is per request, tool calls included, 5 s if unset, which a
# memory write on a loaded machine can pass).
OPENCODE_CONFIG = "opencode.json"
OPENCODE_SCHEMA = "https://opencode.ai/config.json"
OPENCODE_TIMEOUT_MS = 60_000
# Qwen Code's settings format (packages/cli/src/config/settings.ts, SETTINGS_VERSION): a settings file without
# it is rewritten with it on Qwen Code's first run, which would leave the committed file changed after a session.
QWEN_SETTINGS_VERSION = 4
QWEN_APPROVE_STEP = ("approve gitmem's MCP server in Qwen Code once, from the top of the repository: `qwen mcp "
                     "approve gitmem` (Qwen Code skips a project's servers until approved, and asks again when "
                     "their entry changes; `--yolo`, as in a scheduled cycle, skips the check)")
# GitHub Copilot CLI's repository hooks: its session start reads a top-level additionalContext, its stop Claude
# Code's block answer (gitmem.sessions.hooks)
COPILOT_HOOKS_FILE = ".github/hooks/gitmem.json"
COPILOT_HOOKS = (("sessionStart", launcher_shell("hook", "session-start", "--host", "copilot")),
                 ("agentStop", launcher_shell("hook", "stop")))
COPILOT_HOOK_SECONDS = 30
CURSOR_RULE_HEAD = ("---\ndescription: gitmem, this repository's long-term memory, and its protocol\n"
                    "alwaysApply: true\n---\n")


@dataclass(frozen=True)
class PinnedCli:
    """An agent CLI release gitmem tests: agent-cli/<dir>/package-lock.json pins it (the Action and the tests
    install it with `npm ci`), and tests/project/test_agent_cli_pins.py holds this table to those locks."""

    package: str
    version: str
    node: str                      # the major Node.js release it needs, from its `engines`; "" for none (a
    folder: str                    # native binary npm only installs); agent-cli/<folder>

    def install(self) -> str:
        needs = f"; it needs Node.js {self.node} or newer" if self.node else ""
        return f"npm install -g {self.package}@{self.version} (the release gitmem tests{needs})"


PINNED = {"claude": PinnedCli("@anthropic-ai/claude-code", "2.1.197", "18", "claude-code"),
          "codex": PinnedCli("@openai/codex", "0.169.0", "16", "codex"),
          "gemini": PinnedCli("@google/gemini-cli", "0.61.0", "20", "gemini-cli"),
          "opencode": PinnedCli("opencode-ai", "1.18.33", "", "opencode"),
          "qwen": PinnedCli("@qwen-code/qwen-code", "0.24.4", "22", "qwen-code"),
          # its npm loader needs Node 20 (import.meta.resolve); the CLI itself is a native binary with its own
          "copilot": PinnedCli("@github/copilot", "1.0.102", "20", "copilot")}
# agent -> (the commands that start it, one of which must be on PATH; how to install it)
CLIS = {"claude": (("claude",), PINNED["claude"].install()),
        "codex": (("codex",), PINNED["codex"].install()),
        "cursor": (("cursor", "cursor-agent"), "install the Cursor editor, or its CLI (cursor-agent)"),
        "gemini": (("gemini",), PINNED["gemini"].install()),
        "opencode": (("opencode",), PINNED["opencode"].install()),
        "qwen": (("qwen",), PINNED["qwen"].install()),
        "copilot": (("copilot",), PINNED["copilot"].install())}


class SetupProblem(GitmemError):
    """A file cannot be merged safely; it is left alone and the message says how to fix it."""


def claude_allow_list() -> list[str]:
    """Claude Code permission rules for the memory commands and the MCP tools (prefix rules, `:*`)."""
    return [*(f"Bash({command}:*)" for command in (*AGENT_COMMANDS, *LAUNCHED)),
            *(f"mcp__{SERVER}__{name}" for name in tool_names())]


def begin(name: str) -> str:
    return f"<!-- gitmem:begin {name} -->"


def end(name: str) -> str:
    return f"<!-- gitmem:end {name} -->"


def setup(target: Path, agents: Sequence[str], record: Callable[[str, str], None],
          step: Callable[[str], None] = lambda _: None) -> None:
    """Write each agent's files under `target`. `record(rel, what)` hears "created", "updated", "left alone" or
    a problem message for every file; `step(what)` hears what the human still has to do."""
    config = load_config(target)
    for agent in dict.fromkeys(agents):
        if agent not in AGENTS:
            raise SetupProblem(f"unknown agent {agent!r}: choose {', '.join(AGENTS)}")
        for rel, change in _plan(agent, config):
            outcome = "left alone" if _reads_shared(target, rel) else _apply(target, rel, change)
            if outcome is not None:
                record(rel, outcome)
        if agent == "codex":
            if load_config(target).agent.command != codex_recipe.CODEX_CYCLE_COMMAND:
                step(codex_recipe.cycle_step())
            step(codex_recipe.trust_step(target))
        if agent == "qwen":
            step(QWEN_APPROVE_STEP)
        if agent == "copilot":
            step(copilot_recipe.folder_trust_step(target))
            if load_config(target).agent.command != copilot_recipe.COPILOT_CYCLE_COMMAND:
                step(copilot_recipe.scheduled_cycle_step())


def missing_parts(agents: Sequence[str]) -> list[str]:
    """A warning for each part the agents' configs call that this machine lacks, with the command that installs
    it: each agent CLI that is not on PATH. (`gitmem mcp`, which every config starts, needs no extra.)"""
    import shutil

    found = []
    for agent in dict.fromkeys(agents):
        commands, install = CLIS.get(agent, ((), ""))
        if commands and not any(shutil.which(command) for command in commands):
            found.append(f"{agent}: {' or '.join(f'`{c}`' for c in commands)} is not on PATH, so the files are "
                         f"written for an agent CLI this machine does not have yet: {install}")
    return found


Change = Callable[[str | None], str | None]      # old text (None: absent) -> new text (None: leave alone)


def _plan(agent: str, config: Config) -> list[tuple[str, Change]]:
    return [(LAUNCHER, _launcher), *_agent_plan(agent, config)]


def _in_file(rel: str, body: str, config: Config) -> Change:
    """The block holding `body` in `rel`: in RULES' free text when `rel` is the RULES file."""
    return _rules_block(body, config) if rel == config.path("rules") else _block(body)


def _agent_plan(agent: str, config: Config) -> list[tuple[str, Change]]:
    if agent == "cursor":
        return [(".cursor/mcp.json", _json(_server(CURSOR_SPEC))),
                (".cursor/rules/gitmem.mdc", _block(protocol_text(config, agent="cursor"), head=CURSOR_RULE_HEAD))]
    shared = (SHARED_FILE, _in_file(SHARED_FILE, protocol_text(config, agent=SHARED), config))
    if agent == "claude":
        return [(".claude/settings.json", _json(_claude_settings)), (".mcp.json", _json(_server(SERVER_SPEC))),
                shared, ("CLAUDE.md", _in_file("CLAUDE.md", IMPORT_SHARED, config))]
    if agent == "codex":
        return [shared, (".codex/config.toml", _codex_config), (CONFIG_NAME, _codex_cycles)]
    if agent == "opencode":
        return [(OPENCODE_CONFIG, _json(_opencode_config)), shared]
    if agent == "qwen":
        return [(".qwen/settings.json", _json(_qwen_settings)), shared]
    if agent == "copilot":
        return [(".mcp.json", _json(_server(SERVER_SPEC))), shared, (COPILOT_HOOKS_FILE, _json(_copilot_hooks))]
    return [(".gemini/settings.json", _json(_gemini_settings)), shared,
            ("GEMINI.md", _without_block if config.path("rules") != "GEMINI.md" else lambda _old: None)]


def _reads_shared(target: Path, rel: str) -> bool:
    """Whether `rel` is a link to the shared AGENTS.md beside it, a regular file (CLAUDE.md kept as a link to
    AGENTS.md, as a project keeps one file for every CLI): the CLI reading it reads the protocol's block there, so
    it needs nothing of its own, and gitmem writes through no link."""
    if rel == SHARED_FILE or not (target / rel).is_symlink() or (target / SHARED_FILE).is_symlink():
        return False
    try:
        link = os.readlink(target / rel)
    except OSError:
        return False
    return posixpath.normpath(posixpath.join(posixpath.dirname(rel), link)) == SHARED_FILE


def _apply(target: Path, rel: str, change: Change) -> str | None:
    """Read and write through gitmem's trusted-file opener: a linked CLAUDE.md or `.claude/` is named and left
    alone, never written through. None when the file is missing and stays so (nothing to report)."""
    try:
        raw = files.read_bytes(target, rel)
        old = raw.decode("utf-8") if raw is not None else None
    except files.FileRefused as err:
        return f"{err}; left alone"
    except UnicodeDecodeError:
        return f"{PurePosixPath(rel).name}: not UTF-8 text; left alone"
    try:
        new = change(old.replace("\r\n", "\n") if old is not None else None)
    except SetupProblem as err:
        return str(err)
    if new is None and old is None:
        return None
    if new is None or (old is not None and new == old.replace("\r\n", "\n")):
        return "left alone"
    try:
        files.write_bytes(target, rel, with_own_line_ends(old or "", new).encode("utf-8"))
    except files.FileRefused as err:
        return f"{err}; left alone"
    return "created" if old is None else "updated"


def _launcher(old: str | None) -> str:
    """The launcher: created, or brought up to date when it is gitmem's; someone else's file is left alone."""
    if old is not None and not launcher.is_ours(old):
        raise SetupProblem(f"is not gitmem's launcher (its second line is not `{launcher.MARKER}…`); left alone: "
                           "the agent configs run it, so move it away and run `gitmem init --agent …` again")
    return launcher.SCRIPT


# -- managed blocks --------------------------------------------------------------------------------------------

def put_block(text: str, body: str, *, name: str = BLOCK, before: str | None = None) -> str:
    """`text` with the block `name` holding `body`: replaced where it is, else inserted above the line `before`
    (when present), else appended."""
    fenced = f"{begin(name)}\n{body.strip()}\n{end(name)}"
    lines = text.split("\n")
    starts = [i for i, line in enumerate(lines) if line.strip() == begin(name)]
    if starts:
        ends = [i for i, line in enumerate(lines) if line.strip() == end(name) and i > starts[0]]
        if not ends or len(starts) > 1:
            raise SetupProblem(f"the gitmem block `{begin(name)}` is not closed by `{end(name)}` exactly once; fix "
                               "or remove it, then run `gitmem init --agent …` again")
        return "\n".join([*lines[:starts[0]], fenced, *lines[ends[0] + 1:]])
    if before is not None and before in lines:
        at = lines.index(before)
        return "\n".join([*lines[:at], fenced, "", *lines[at:]])
    stripped = text.rstrip("\n")
    return (stripped + "\n\n" if stripped else "") + fenced + "\n"


def _without_block(old: str | None) -> str | None:
    """`old` without gitmem's protocol block (an older init's, now in AGENTS.md), the rest kept; a file that was
    nothing but the block is left empty rather than removed, being the user's to delete."""
    if old is None or begin(BLOCK) not in old:
        return None
    lines = old.split("\n")
    start = next(i for i, line in enumerate(lines) if line.strip() == begin(BLOCK))
    stop = next((i for i in range(start, len(lines)) if lines[i].strip() == end(BLOCK)), None)
    if stop is None:
        raise SetupProblem(f"the gitmem block `{begin(BLOCK)}` is not closed by `{end(BLOCK)}`; fix or remove it, "
                           "then run `gitmem init --agent …` again")
    after = stop + 1
    if start > 0 and after < len(lines) and not lines[start - 1].strip() and not lines[after].strip():
        after += 1          # the blank line the block stood between, once
    text = "\n".join([*lines[:start], *lines[after:]]).strip("\n")
    return text + "\n" if text else ""


def _block(body: str, *, head: str = "") -> Change:
    def change(old: str | None) -> str:
        return put_block(old if old is not None else head, body)
    return change


def _rules_block(body: str, config: Config) -> Change:
    """A block in the RULES file's free text, above `## Proven rules`; refused if RULES would not pass as it did."""
    from gitmem.memory import rules

    rel, limit = config.path("rules"), config.limits.rules_max_lines

    def change(old: str | None) -> str:
        if old is None:
            raise SetupProblem(f"{rel} is the RULES file (gitmem.yaml) and it is missing; create it (`gitmem init`), "
                               "then run `gitmem init --agent …` again")
        new = put_block(old, body, before=f"## {rules.PROVEN}")
        before, after = rules.parse(old), rules.parse(new)
        same = [r.content() for r in after.all] == [r.content() for r in before.all]
        if not same or len(after.problems) > len(before.problems) or after.line_count > max(limit, before.line_count):
            raise SetupProblem(f"{rel} is the RULES file and the gitmem block would not fit it ({after.line_count} of "
                               f"{limit} lines); left alone: make room, then run `gitmem init --agent …` again")
        return new
    return change


# -- JSON and TOML ---------------------------------------------------------------------------------------------

def _json(merge: Callable[[dict[str, Any]], None]) -> Change:
    """A JSON settings file, read as the agent CLIs read theirs (comments and trailing commas allowed: `jsonc`),
    with `merge`'s keys added. A plain JSON file is written back whole; one with comments is edited in place, so
    the user's comments stay, or left alone with the line a lossless edit could not make."""
    def change(old: str | None) -> str | None:
        try:
            data = jsonc.loads(old) if old is not None and old.strip() else {}
        except ValueError as err:
            raise SetupProblem(f"not valid JSON ({err}); fix it, then run `gitmem init --agent …` again") from None
        if not isinstance(data, dict):
            raise SetupProblem("expected a JSON object; left alone")
        before = copy.deepcopy(data)
        merge(data)
        if old is not None and json.dumps(data, sort_keys=True) == json.dumps(before, sort_keys=True):
            return None
        if old is None or not old.strip() or jsonc.is_plain(old):
            return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
        try:
            return jsonc.edited(old, before, data)
        except jsonc.LossyEdit as err:
            raise SetupProblem(f"holds comments, and the change gitmem needs would lose one ({err}); left alone: "
                               "make that change by hand, or move the comment, then run `gitmem init --agent …` "
                               "again") from None
        except jsonc.UnfaithfulEdit as err:
            raise SetupProblem(f"holds comments, so gitmem edits it in place, and {err}; left alone: make the "
                               "change by hand, then run `gitmem init --agent …` again") from None
    return change


def _table(data: dict[str, Any], key: str) -> dict[str, Any]:
    found = data.setdefault(key, {})
    if not isinstance(found, dict):
        raise SetupProblem(f"`{key}` must be an object; left alone")
    return found


def _list(data: dict[str, Any], key: str) -> list[Any]:
    found = data.setdefault(key, [])
    if not isinstance(found, list):
        raise SetupProblem(f"`{key}` must be a list; left alone")
    return found


def _entries(group: dict[str, Any], event: str) -> list[Any]:
    found = group.get("hooks", [])
    if not isinstance(found, list):
        raise SetupProblem(f"`hooks.{event}[].hooks` must be a list; left alone")
    return found


def _server(spec: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    def merge(data: dict[str, Any]) -> None:
        servers = _table(data, "mcpServers")
        if servers.get(SERVER) in BARE_SPECS:
            del servers[SERVER]
        _renew_server(servers.get(SERVER))
        servers.setdefault(SERVER, dict(spec))
    return merge


def _renew_server(entry: object) -> bool:
    """An entry `{"command": "sh", "args": [...]}` an older init wrote with an older finder gets today's, its
    other keys kept; whether it changed."""
    if not isinstance(entry, dict) or entry.get("command") != "sh" or not isinstance(entry.get("args"), list):
        return False
    renewed = launcher.renewed_command(["sh", *entry["args"]])
    if renewed is None or renewed[1:] == list(entry["args"]):
        return False
    entry["args"] = renewed[1:]
    return True


def _gemini_settings(data: dict[str, Any]) -> None:
    """The trusted server, and AGENTS.md among Gemini CLI's context files (`context.fileName`: a name or a list)."""
    _server(GEMINI_SPEC)(data)
    _shared_context(data, GEMINI_CONTEXT_DEFAULT)


def _shared_context(data: dict[str, Any], default: tuple[str, ...] | None) -> None:
    """AGENTS.md among the context files of Gemini CLI or its fork Qwen Code (`context.fileName`: a name or a
    list). Where the settings name none, `default` is the CLI's own list, to which it is added, or None when the
    CLI's default reads AGENTS.md already (the settings are then left without names)."""
    found = data.get("context")
    if default is None and not (isinstance(found, dict) and "fileName" in found):
        if found is not None and not isinstance(found, dict):
            raise SetupProblem("`context` must be an object; left alone")
        return
    context = _table(data, "context")
    names = context.get("fileName", list(default or ()))
    if isinstance(names, str):
        names = [names]
    if not isinstance(names, list) or not all(isinstance(name, str) for name in names):
        raise SetupProblem("`context.fileName` must be a file name or a list of them; left alone")
    if SHARED_FILE not in names:
        context["fileName"] = [*names, SHARED_FILE]


def opencode_server() -> dict[str, Any]:
    """The gitmem server in `opencode.json`'s `mcp` (OpenCode starts it with its own environment, so a runner
    cycle's GITMEM_* variables reach it: packages/opencode/src/mcp/index.ts)."""
    return {"type": "local", "command": [SERVER_SPEC["command"], *SERVER_SPEC["args"]], "enabled": True,
            "timeout": OPENCODE_TIMEOUT_MS}


def _opencode_config(data: dict[str, Any]) -> None:
    if not data:
        data["$schema"] = OPENCODE_SCHEMA
    _table(data, "mcp").setdefault(SERVER, opencode_server())


def qwen_server() -> dict[str, Any]:
    """The gitmem server in `.qwen/settings.json`'s `mcpServers` (Qwen Code 0.24's schema, Gemini CLI's plus
    more): `trust`, so its memory tools run without a confirmation, as Claude Code's allow-list lets them (none of
    them answers a decision); `alwaysLoadTools`, so they are declared to the model from the first turn instead of
    behind Qwen Code's tool_search (packages/core/src/tools/mcp-client.ts, DiscoveredMCPTool's alwaysLoad)."""
    return {**SERVER_SPEC, "trust": True, "alwaysLoadTools": True}


def _qwen_settings(data: dict[str, Any]) -> None:
    """The server, the settings version, and AGENTS.md among the context files where the user named others
    (`context.fileName`: packages/core/src/utils/memory-constants.ts reads QWEN.md and AGENTS.md when unset).
    The version goes only into a new file: a user's file without one is in Qwen Code's first, flat format, which
    Qwen Code upgrades only while its version is missing, and would otherwise stop reading."""
    if not data:
        data["$version"] = QWEN_SETTINGS_VERSION
    _server(qwen_server())(data)
    _shared_context(data, None)
def _copilot_hooks(data: dict[str, Any]) -> None:
    """Copilot CLI's hook file (`{"version": 1, "hooks": {EVENT: [{"type": "command", "bash": …}]}}`): each
    gitmem hook added once, every other entry kept."""
    data.setdefault("version", 1)
    hooks = _table(data, "hooks")
    for event, command in COPILOT_HOOKS:
        entries = hooks.setdefault(event, [])
        if not isinstance(entries, list):
            raise SetupProblem(f"`hooks.{event}` must be a list; left alone")
        if not any(isinstance(entry, dict) and entry.get("bash") == command for entry in entries):
            entries.append({"type": "command", "bash": command, "timeoutSec": COPILOT_HOOK_SECONDS})


def _claude_settings(data: dict[str, Any]) -> None:
    hooks = _table(data, "hooks")
    for event, command in HOOKS:
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise SetupProblem(f"`hooks.{event}` must be a list; left alone")
        hooks_there = [hook for group in groups if isinstance(group, dict) for hook in _entries(group, event)
                       if isinstance(hook, dict)]
        for hook in hooks_there:
            line = hook.get("command")
            if line in BARE_HOOKS:
                hook["command"] = BARE_HOOKS[line]
            elif isinstance(line, str) and (renewed := launcher.renewed_shell(line)) is not None:
                hook["command"] = renewed        # an older finder's: gitmem's own, so it is brought up to date
        present = [hook.get("command", "") for hook in hooks_there]
        if not any(str(line) == command or str(line).startswith(f"{command} --") for line in present):
            groups.append({"hooks": [{"type": "command", "command": command}]})
    if not data.get("enableAllProjectMcpServers"):
        servers = _list(data, "enabledMcpjsonServers")
        if SERVER not in servers:
            servers.append(SERVER)
    allow = _list(_table(data, "permissions"), "allow")
    allow.extend(rule for rule in claude_allow_list() if rule not in allow)


def _codex_cycles(old: str | None) -> str | None:
    return codex_recipe.with_recipe(old) if old is not None else None


def codex_server() -> dict[str, Any]:
    """The gitmem server's keys in `.codex/config.toml` (Codex 0.169's `mcp_servers.<name>` schema):
    - `required`: `codex exec` waits for the server instead of leaving it out of the first request, and fails
      loudly when it cannot start;
    - `env_vars`: Codex starts MCP servers with a minimal environment; inside a runner cycle the server needs the
      runner's GITMEM_* variables to write the cycle's entry (outside one they are unset, and it writes a session);
    - `default_tools_approval_mode = "approve"`: on this server only, so gitmem's memory tools run under
      `codex exec`'s approval policy `never` (which refuses any tool that would ask) while every other server
      keeps Codex's default."""
    return {"command": SERVER_SPEC["command"], "args": list(SERVER_SPEC["args"]), "required": True,
            "env_vars": list(CYCLE_ENV), "default_tools_approval_mode": "approve"}


# Top-level keys of `.codex/config.toml`. Codex runs shell commands in a login shell (`bash -lc`) by default,
# whose profile resets PATH, so `gitmem` from the venv or ~/.local/bin is "command not found" there.
CODEX_TOP = {"allow_login_shell": False}


def _codex_config(old: str | None) -> str | None:
    try:
        import tomlkit
    except ImportError:
        from gitmem import extras

        raise SetupProblem(f"needs tomlkit to merge TOML: {extras.extra_install_line('agents')}") from None
    from tomlkit.exceptions import ParseError
    from tomlkit.items import InlineTable

    try:
        with parsing():
            doc = within_depth(tomlkit.parse(old or ""))
    except TooDeep as err:
        raise SetupProblem(f"{err}; fix it, then run `gitmem init --agent codex` again") from None
    except ParseError as err:
        raise SetupProblem(f"not valid TOML ({err}); fix it, then run `gitmem init --agent codex` again") from None
    servers = doc.get("mcp_servers")
    if servers is None:
        servers = tomlkit.table(is_super_table=True)
        doc["mcp_servers"] = servers
    if not isinstance(servers, dict):
        raise SetupProblem("`mcp_servers` must be a table; left alone")
    changed = False
    for key, value in CODEX_TOP.items():
        if key not in doc:      # a value the user chose stays
            doc[key] = value    # tomlkit puts a new top-level key above the first table
            changed = True
    entry = servers.get(SERVER)
    if entry is None:
        # an inline table (`mcp_servers = {…}`) can hold only inline tables
        entry = tomlkit.inline_table() if isinstance(servers, InlineTable) else tomlkit.table()
        servers[SERVER] = entry
    if not isinstance(entry, dict):
        raise SetupProblem(f"`mcp_servers.{SERVER}` must be a table; left alone")
    if {"command": entry.get("command"), "args": list(entry.get("args", []))} in BARE_SPECS:
        # an older init's entry calls a bare `gitmem` from PATH: gitmem's own, so it gets the launcher
        entry["command"] = SERVER_SPEC["command"]
        entry["args"] = list(SERVER_SPEC["args"])
        changed = True
    changed = _renew_server(entry) or changed
    for key, value in codex_server().items():
        if key not in entry:    # an older init's entry gets the new keys; the user's own values stay
            entry[key] = value
            changed = True
    passed = entry.get("env_vars")
    missing = [name for name in CYCLE_ENV if isinstance(passed, list) and name not in passed]
    if isinstance(passed, list) and missing:     # and the cycle variables it lacks (GITMEM_WORKSPACE, newer)
        passed.extend(missing)
        changed = True
    return tomlkit.dumps(doc) if changed else None
