"""Memory-writing commands: canonical entries with clock timestamps. They write files only, never stage or commit."""
from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import click

from gitmem.cli.common import CommandGroup, json_option, open_memory, show, show_json, workspace_option
from gitmem.errors import ExitCode, exit_codes_help
from gitmem.memory.log import OUTCOMES
from gitmem.memory.operations import operation_named

if TYPE_CHECKING:     # the library loads inside commands only
    from gitmem.gitio import Identity
    from gitmem.memory_writer import MemoryWriter
    from gitmem.workspace import Workspace


def _memory(workspace: str | None) -> tuple[MemoryWriter, Workspace, Identity | None]:
    from gitmem import gitio
    from gitmem.memory_writer import MemoryWriter

    # Every memory-writing command: outside a memory repository there is nothing to write to, and a file made
    # here would pass for memory.
    ws = open_memory(workspace)
    identity = gitio.user_identity(ws.repo)
    return MemoryWriter(ws, author_email=identity.email if identity else None), ws, identity


def _note_cycle(number: int | None, ws: Workspace, what: str) -> None:
    """Outside a cycle, say which cycle a lesson, confirmation or decision (`what`) was filed under, and why;
    for a confirmation, also when it counts (only a confirmation's count depends on its cycle)."""
    import os

    from gitmem.workspace import CYCLE_ENV

    if number is None or os.environ.get(CYCLE_ENV):
        return
    which = ("the open one: its LOG entry is written but not committed" if number <= ws.last_log_cycle()
             else "the next one")
    counts = ("; a confirmation counts only when it is committed together with that cycle's LOG entry"
              if what == "confirmation" else "")
    click.echo(f"gitmem: no cycle is running ({CYCLE_ENV} is not set): the {what} is recorded as cycle {number}, "
               f"{which}{counts}", err=True)


def _done(what: str, path: str, line: str, as_json: bool, data: dict[str, Any]) -> int:
    """What was written, as every view shows memory: masked, and each character a terminal would act on or a reader
    could not see (a zero-width space in a title) escaped (`gitmem.memory.display.printable`)."""
    from gitmem.memory.display import printable, printable_data

    if as_json:
        show_json(printable_data({"path": path, **data}))
    else:
        show(printable(f"{path}: {what}: {line}"))
    return ExitCode.OK


_F = TypeVar("_F", bound=Callable[..., Any])


def python_name(name: str) -> str:
    """The Python parameter a field arrives in: its own name, or with a `_` where that is a builtin (`next`)."""
    return f"{name}_" if hasattr(builtins, name) else name


def field_help(tool: str, name: str) -> str:
    """The help text of one field of a memory operation, for a command that takes it too (`log amend`)."""
    return next(param.help for param in operation_named(tool).params if param.name == name)


def declared(tool: str) -> Callable[[_F], _F]:
    """The options (and argument) of the command that writes `tool`, from the one table of memory operations
    (gitmem.memory.operations): the same names, help texts and choices as the tool the agent calls."""
    def apply(command: _F) -> _F:
        for param in reversed(operation_named(tool).params):
            if param.argument:
                command = click.argument(python_name(param.name), metavar=param.metavar or None)(command)
            else:
                command = click.option(f"--{param.name}", python_name(param.name), required=param.required,
                                       type=click.Choice(param.choices) if param.choices else None,
                                       metavar=param.metavar or None, help=param.help)(command)
        return command
    return apply


# Every code a memory write can end with (its --help lists them, and 70 and 130, which any command can).
EXIT_CODES = {
    ExitCode.OK: "written",
    ExitCode.VIOLATIONS: "refused: the result would be invalid memory, LOG holds invalid entries to amend "
                         "first, git holds a memory file unmerged, or a cycle runs in this checkout (nothing was "
                         "written)",
    ExitCode.USAGE: "usage or config error, not a git repository, or no memory here (run `gitmem init`)",
    ExitCode.DIRTY: "another writer held the memory write lock too long (nothing written)",
}
EPILOG = exit_codes_help(EXIT_CODES)


@click.group("log", cls=CommandGroup)
def log_group() -> None:
    """Append to LOG.md."""


@log_group.command("add", epilog=EPILOG)
@declared("log_entry")
@json_option
@workspace_option
def log_add(task: str, outcome: str, result: str, tried: str | None, evidence: str | None, learned: str | None,
            blocked: str | None, as_json: bool, workspace: str | None) -> int:
    """Append one cycle entry, numbered from LOG, timestamped by the clock.

    Outside a runner cycle (GITMEM_CYCLE not set) the entry is an interactive session's, and says so:
    `- Session: interactive`. A session writes one entry: while LOG's last entry is not committed, another is
    refused (exit 1), whoever writes it (this command, the MCP tool, another process).
    """
    from gitmem.workspace import runner_cycle

    memory, ws, _ = _memory(workspace)
    # Outside a runner cycle, whoever writes the entry (a human, or the human's own agent) is an interactive
    # session: the entry says so.
    entry = memory.add_log_entry(task=task, outcome=outcome, result=result, tried=tried, evidence=evidence,
                                 learned=learned, blocked=blocked, interactive=runner_cycle() is None)
    return _done("appended", ws.config.path("log"), entry.heading(), as_json,
                 {"cycle": entry.cycle, "outcome": outcome, "timestamp": str(entry.when)})


@log_group.command("amend", epilog=EPILOG)
@click.option("--line", "line", required=True, type=click.IntRange(min=1), metavar="N",
              help="The line of the invalid entry's heading (`gitmem status` and `gitmem verify` name it).")
@click.option("--outcome", required=True, type=click.Choice((*OUTCOMES, "close")),
              help="How the amended cycle ended, or `close` to amend a close entry.")
@click.option("--result", required=True, help=field_help("log_entry", "result"))
@click.option("--task", help="What the cycle set out to do (required for a cycle).")
@click.option("--tried", help=field_help("log_entry", "tried"))
@click.option("--evidence", help=field_help("log_entry", "evidence"))
@click.option("--learned", help=field_help("log_entry", "learned"))
@click.option("--blocked", metavar="D-NNNN", help="The pending decision(s) the cycle is blocked on.")
@json_option
@workspace_option
def log_amend(line: int, outcome: str, result: str, task: str | None, tried: str | None, evidence: str | None,
              learned: str | None, blocked: str | None, as_json: bool, workspace: str | None) -> int:
    """Append an amendment that supersedes the invalid entry at line N (a malformed heading committed without the
    check, or an entry that breaks the LOG rules): `## <now> · amends line N · cycle M · <outcome>`.

    LOG stays append-only: the old entry is not touched; check, verify, recall and the context read the
    amendment in its place. It is numbered and timestamped like a new entry (docs/format.md, Amending LOG).
    """
    from gitmem.workspace import runner_cycle

    memory, ws, _ = _memory(workspace)
    entry = memory.amend_log_entry(line, outcome=outcome, result=result, task=task, tried=tried, evidence=evidence,
                                   learned=learned, blocked=blocked, interactive=runner_cycle() is None)
    return _done("amended", ws.config.path("log"), entry.heading(), as_json,
                 {"amends": line, "cycle": entry.cycle, "outcome": outcome, "timestamp": str(entry.when)})


@click.group("now", cls=CommandGroup)
def now_group() -> None:
    """Put a new block on top of NOW.md."""


@now_group.command("add", epilog=EPILOG)
@declared("now_block")
@json_option
@workspace_option
def now_add(did: str, human: str, next_: str, as_json: bool, workspace: str | None) -> int:
    """Add a `cycle N` block on top of NOW."""
    memory, ws, _ = _memory(workspace)
    block = memory.add_now_block(did=did, human=human, next=next_)
    return _done("added", ws.config.path("now"), block.heading(), as_json,
                 {"cycle": block.cycle, "timestamp": str(block.when)})


@click.group("decision", cls=CommandGroup)
def decision_group() -> None:
    """Ask the human a decision, or answer one as the human."""


@decision_group.command("ask", epilog=EPILOG)
@declared("ask_decision")
@json_option
@workspace_option
def decision_ask(title: str, recommendation: str, context: str | None, options: str | None, as_json: bool,
                 workspace: str | None) -> int:
    """Add a Pending decision with the next free ID."""
    memory, ws, _ = _memory(workspace)
    item = memory.ask_decision(title=title, recommendation=recommendation, context=context, options=options)
    _note_cycle(item.asked_cycle, ws, "decision")
    return _done("asked", ws.config.path("decisions"), item.heading(), as_json, {"id": item.id, "title": title})


# Every code `gitmem decision answer` can end with (the help lists them, and 70 and 130).
ANSWER_EXIT_CODES = {
    ExitCode.OK: "answered",
    ExitCode.VIOLATIONS: "refused: the decision is not Pending, DECISIONS is invalid, it runs inside an agent's "
                         "cycle (GITMEM_CYCLE is set: only the human answers), git holds a memory file unmerged, "
                         "or a cycle runs in this checkout",
    ExitCode.USAGE: "usage or config error, no git identity, or no memory here (run `gitmem init`)",
}


@decision_group.command("answer", epilog=exit_codes_help(ANSWER_EXIT_CODES))
@click.argument("decision_id", metavar="D-NNNN")
@click.option("--answer", required=True, help="The human's answer.")
@json_option
@workspace_option
def decision_answer(decision_id: str, answer: str, as_json: bool, workspace: str | None) -> int:
    """Answer a Pending decision in place, recording your git identity as Answered-by.

    `Answer` and `Answered` become the decision's last lines and it stays under Pending (rules 4), so the
    change merges over the agent's new questions."""
    memory, ws, identity = _memory(workspace)
    if identity is None:
        from gitmem.gitio import RepoError

        raise RepoError("set your git identity first: git config user.name / user.email")
    item = memory.answer_decision(decision_id, answer=answer, name=identity.name, email=identity.email)
    return _done("answered", ws.config.path("decisions"), item.heading(), as_json,
                 {"id": item.id, "answered_by": str(identity)})


@click.group("lesson", cls=CommandGroup)
def lesson_group() -> None:
    """Record a lesson, or confirm one with a later result."""


@lesson_group.command("add", epilog=EPILOG)
@declared("add_lesson")
@json_option
@workspace_option
def lesson_add(title: str, happened: str, why: str, change: str, rule: str | None, supersedes: str | None,
               as_json: bool, workspace: str | None) -> int:
    """Add an open lesson with the next free ID, dated now and tied to the current cycle."""
    memory, ws, _ = _memory(workspace)
    item = memory.add_lesson(title=title, happened=happened, why=why, change=change, rule=rule,
                             supersedes=supersedes)
    _note_cycle(item.happened.cycle if item.happened else None, ws, "lesson")
    return _done("added", ws.config.path("lessons"), item.heading(), as_json, {"id": item.id})


@lesson_group.command("confirm", epilog=EPILOG)
@declared("confirm_lesson")
@json_option
@workspace_option
def lesson_confirm(id_: str, evidence: str, as_json: bool, workspace: str | None) -> int:
    """Add a `Confirmed:` line from the current cycle."""
    memory, ws, _ = _memory(workspace)
    item = memory.confirm_lesson(id_, evidence=evidence)
    events = [event for _, event in item.confirmations if event is not None]
    _note_cycle(events[-1].cycle if events else None, ws, "confirmation")
    return _done("confirmed", ws.config.path("lessons"), item.heading(), as_json,
                 {"id": item.id, "confirmations": len(item.confirmations)})


@click.group("roadmap", cls=CommandGroup)
def roadmap_group() -> None:
    """Tick off ROADMAP items."""


@roadmap_group.command("done", epilog=EPILOG)
@declared("roadmap_done")
@json_option
@workspace_option
def roadmap_done(item: str, as_json: bool, workspace: str | None) -> int:
    """Tick the open ITEM of ROADMAP's current section (its text, or a part of it only that item holds) once the
    work is finished: the daily close plans the top open item until it is ticked."""
    memory, ws, _ = _memory(workspace)
    found = memory.tick_roadmap(item)
    return _done("ticked", ws.config.path("roadmap"), found, as_json, {"ticked": found})


COMMANDS = (log_group, now_group, decision_group, lesson_group, roadmap_group)
