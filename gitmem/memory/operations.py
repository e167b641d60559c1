"""The memory operations, declared once as data: each write an agent or a human makes to memory (a LOG entry, a
NOW block, a decision asked, a lesson added or confirmed, a ROADMAP item ticked), its fields with their type,
help text and limits.

Everything else is rendered from this table: the tools' input schemas and descriptions (gitmem.agents.schemas),
which the MCP server lists as they are; the options of `gitmem log add` and its siblings (gitmem.cli.write); the
cycle prompt's two lists of them (gitmem.agents.tools); the commands an agent may run and the protocol block
(gitmem.sessions.protocol). `MemoryWriter` and `Toolbox` take these fields by these names, which a test holds
(tests/memory/test_memory_operations.py). Plain named tuples, read by `gitmem --help`: nothing here costs an import.
"""
from __future__ import annotations

from typing import NamedTuple

from gitmem.memory.log import OUTCOMES

# Characters of one text field: far beyond what one memory field may hold, and low enough that no tool's cost on
# it is noticeable (the tools refuse more before they run: gitmem.agents.tool_input).
MAX_TEXT = 50_000


class Param(NamedTuple):
    """One field of an operation: a tool argument, a keyword of the writer, an option (or the argument) of the
    command."""

    name: str
    help: str
    required: bool = False
    choices: tuple[str, ...] = ()     # the only values it takes (then it is not free text)
    metavar: str = ""                 # the form of an ID it takes (`D-NNNN`), shown in usage
    argument: bool = False            # the command's positional argument, the writer's positional parameter

    def described(self) -> str:
        """The help with the form it takes, for a reader that sees no usage line (a model reading a schema)."""
        return f"{self.help.removesuffix('.')} ({self.metavar})." if self.metavar else self.help


class Operation(NamedTuple):
    tool: str             # the tool's name (a cycle's tools, the MCP server)
    command: str          # the `gitmem` subcommand
    writer: str           # the MemoryWriter method that writes it
    summary: str          # one line, for the prompt's list of operations
    description: str      # the tool's description, for a cycle and a session alike
    params: tuple[Param, ...]

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(param.name for param in self.params if param.required)


OPERATIONS = (
    Operation(
        "log_entry", "log add", "add_log_entry", "this cycle's one LOG entry",
        "Write this session's (or cycle's) one LOG entry, once, at the end: what the task was, the outcome (built, "
        "published, or no-build with the reason: Rule 0), the result and evidence. Timestamp and cycle number are "
        "written for you; outside a runner cycle the entry is marked as an interactive session.",
        (Param("task", "What this cycle set out to do.", required=True),
         Param("outcome", "How it ended; no-build when the cycle built nothing (say why in the result).",
               required=True, choices=OUTCOMES),
         Param("result", "What came of it; for no-build, why nothing was built (Rule 0).", required=True),
         Param("tried", "What was tried."),
         Param("evidence", "Evidence: commands, numbers, links."),
         Param("learned", "What was learned."),
         Param("blocked", "The pending decision(s) this cycle is blocked on; the close plans around them.",
               metavar="D-NNNN"))),
    Operation(
        "now_block", "now add", "add_now_block", "this cycle's one NOW block",
        "Put this session's (or cycle's) one NOW block on top: what was done, what the human needs to know or do, "
        "what comes next. Once per session, after the LOG entry.",
        (Param("did", "What was done.", required=True),
         Param("human", "What the human needs to know or do ('nothing' is fine).", required=True),
         Param("next", "What comes next.", required=True))),
    Operation(
        "ask_decision", "decision ask", "ask_decision", "a question for the human, with your recommendation",
        "Ask the human a decision (DECISIONS Pending) with your recommendation. Only the human answers; do not "
        "wait: go on with the next task.",
        (Param("title", "The question for the human, in one line (the decision's heading).", required=True),
         Param("recommendation", "What the agent recommends, and why.", required=True),
         Param("context", "What the human needs to know to decide."),
         Param("options", "The options on the table."))),
    Operation(
        "add_lesson", "lesson add", "add_lesson", "a real mistake and what must change",
        "Record a real mistake in LESSONS: what happened, why, what must change (and the one-line rule it would "
        "become). Confirmations by later cycles promote it to a proven rule.",
        (Param("title", "What the lesson is about, in one line (its heading).", required=True),
         Param("happened", "What went wrong.", required=True),
         Param("why", "Why it happened.", required=True),
         Param("change", "What must change.", required=True),
         Param("rule", "The one-line rule this lesson would become."),
         Param("supersedes", "A rule this lesson replaces once promoted.", metavar="R-NN"))),
    Operation(
        "confirm_lesson", "lesson confirm", "confirm_lesson", "later evidence that confirms a lesson",
        "Confirm a lesson (L-NNNN) with this session's evidence. It counts once it is committed together with "
        "this session's LOG entry.",
        (Param("id", "The lesson to confirm.", required=True, metavar="L-NNNN", argument=True),
         Param("evidence", "The later result that confirms the lesson.", required=True))),
    Operation(
        "roadmap_done", "roadmap done", "tick_roadmap",
        "tick off the ROADMAP item this cycle finished; the close plans the top open item until then",
        "Tick off the ROADMAP item this cycle finished (the daily close plans the top open item until it is "
        "ticked).",
        (Param("item", "The item's text, or a part of it only that item holds.", required=True, argument=True),)),
)


def operation_named(tool: str) -> Operation:
    return next(operation for operation in OPERATIONS if operation.tool == tool)


def input_schema(operation: Operation) -> dict[str, object]:
    """The operation's arguments as a JSON Schema object (the tools' `input_schema`, MCP's `inputSchema`)."""
    properties: dict[str, object] = {}
    for param in operation.params:
        kind: dict[str, object] = {"type": "string", "description": param.described()}
        properties[param.name] = {**kind, "enum": list(param.choices)} if param.choices else \
            {**kind, "maxLength": MAX_TEXT}
    return {"type": "object", "properties": properties, "required": list(operation.required)}


def _field_list(operation: Operation) -> str:
    shown = [param.name + (f" {'|'.join(param.choices)}" if param.choices else "") for param in operation.params]
    required = [text for text, param in zip(shown, operation.params, strict=True) if param.required]
    optional = [text for text, param in zip(shown, operation.params, strict=True) if not param.required]
    return ", ".join(required) + (f"; optional: {', '.join(optional)}" if optional else "")


def tool_lines() -> list[str]:
    """The prompt's list of the operations as tools."""
    return [f"- {operation.tool}: {operation.summary} ({_field_list(operation)})" for operation in OPERATIONS]


def usage(operation: Operation, *, optional: bool = True) -> str:
    """The command line that writes it (`gitmem log add --task "…" …`), without the optional options if asked."""
    words = [f"gitmem {operation.command}"]
    for param in operation.params:
        if param.argument:
            words.append(param.metavar or f'"{param.name}"')
        elif param.required or optional:
            value = "|".join(param.choices) or param.metavar or '"…"'
            words.append(f"--{param.name} {value}" if param.required else f"[--{param.name} {value}]")
    return " ".join(words)


def command_lines() -> list[str]:
    """The prompt's list of the operations as `gitmem` commands (for an agent CLI run as a command)."""
    return [f"- {usage(operation)}: {operation.summary}" for operation in OPERATIONS]
