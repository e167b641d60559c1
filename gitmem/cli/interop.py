"""`gitmem import SOURCE` and `gitmem export --to FORMAT`: other agent CLIs' memories in and out."""
from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

from gitmem.cli.common import json_option, show, show_json, workspace_option
from gitmem.codes import (
    EXPORT_TARGET_REFUSED,
    IMPORT_BATCH_OVER_PENDING,
    IMPORT_FRONTMATTER_INVALID,
    IMPORT_PATCH_INVALID,
    IMPORT_SOURCE_MISSING,
    IMPORT_SOURCE_UNREADABLE,
)
from gitmem.errors import ExitCode, exit_codes_help

if TYPE_CHECKING:     # the library loads inside commands only
    from gitmem.interop.export import Exported
    from gitmem.interop.importing import Imported
    from gitmem.workspace import Workspace

SOURCES = ("claude", "codex", "gemini", "cline", "agent-memory-repo", "notes")
EXPORT_FORMATS = ("agent-memory-repo", "claude", "codex", "gemini")

IMPORT_EXIT_CODES = {
    ExitCode.OK: "imported, or nothing new to import, or --dry-run",
    ExitCode.VIOLATIONS: f"a source file cannot be read ({IMPORT_SOURCE_UNREADABLE.code}, "
                         f"{IMPORT_FRONTMATTER_INVALID.code}, {IMPORT_PATCH_INVALID.code}), the batch's decision "
                         f"would not fit Pending ({IMPORT_BATCH_OVER_PENDING.code}, --dry-run too) or the memory "
                         "would not be valid; nothing was written",
    ExitCode.USAGE: f"usage or config error, the source is not there ({IMPORT_SOURCE_MISSING.code}), not a git "
                    "repository",
}
EXPORT_EXIT_CODES = {
    ExitCode.OK: "exported",
    ExitCode.VIOLATIONS: f"a file there is not one gitmem exported, or is another format's export (without "
                         f"--force), or is a link, or the directory cannot be made ({EXPORT_TARGET_REFUSED.code}); "
                         "nothing was written",
    ExitCode.USAGE: "usage or config error, not a git repository, or no memory here (run `gitmem init`)",
}


@click.command("import", epilog=exit_codes_help(IMPORT_EXIT_CODES))
@click.argument("source", metavar="SOURCE", type=click.Choice(SOURCES))
@click.option("--from", "where", metavar="PATH", type=click.Path(file_okay=False, path_type=str),
              help="Read the source's directory here instead of where its CLI keeps it for this project "
                   "(required for agent-memory-repo, whose spec names no place).")
@click.option("--dry-run", is_flag=True, help="Show what would land where; write nothing.")
@json_option
@workspace_option
def import_command(source: str, where: str | None, dry_run: bool, as_json: bool, workspace: str | None) -> int:
    """Bring another agent CLI's memory into this repository, for the human's review.

    \b
    SOURCE and where it is read (override with --from):
      claude             Claude Code auto memory: $CLAUDE_CONFIG_DIR (~/.claude)/projects/<project>/memory/,
                         or the autoMemoryDirectory of your settings.json there
      codex              Codex memories: $CODEX_HOME (~/.codex)/memories/
      gemini             the global memory ~/.gemini/GEMINI.md (and the files context.fileName names
                         in ~/.gemini/settings.json), `## Gemini Added Memories` in ./GEMINI.md, and the
                         project's private memory, ~/.gemini/tmp/<project>/memory/ (MEMORY.md, topic
                         files, and .inbox/ of proposed patches, none applied)
      cline              Cline's memory bank: ./memory-bank/*.md
      agent-memory-repo  an Agent Memory Repo's MEMORY.md (--from is required)
      notes              the project's instruction files outside gitmem's own blocks: ./CLAUDE.md,
                         .claude/CLAUDE.md, CLAUDE.local.md, .claude/rules/**/*.md, AGENTS.md,
                         GEMINI.md (and the names context.fileName gives in .gemini/settings.json),
                         QWEN.md, .github/copilot-instructions.md, .github/instructions/**/
                         *.instructions.md, the same names in the project's folders that git
                         tracks, and the project's markdown files they import (@path lines, as
                         Claude Code loads them)

    Nothing imported is in force by itself: corrections land in LESSONS as open lessons (two confirmations by
    later cycles promote one), other facts as proposals in one Pending decision per import, which lists all
    the batch adds; each fact keeps its origin (source, file:line, the day written there). Importing again
    adds nothing; a fact edited in the source supersedes its earlier import. Secrets are masked. Commit the
    changed memory files yourself.
    """
    from gitmem.cli.write import _memory
    from gitmem.interop.importing import import_source

    writer, ws, _ = _memory(workspace)
    done = import_source(source, writer, ws, where=Path(where).expanduser() if where else None, dry_run=dry_run,
                         environ=os.environ, home=Path.home())
    if as_json:
        return _import_json(done)
    _show_import(done, ws)
    return ExitCode.OK


def _import_json(done: Imported) -> int:
    """`--json`: the plan, what was refused and what was written; exit 1 when the batch was refused."""
    from gitmem.interop.importing import imported_data

    show_json(imported_data(done), indent=2)
    return ExitCode.VIOLATIONS if done.refused is not None else ExitCode.OK


def _show_import(done: Imported, ws: Workspace) -> None:
    """The plan as text, then the refusal (BatchOverPending, exit 1) or what was written and what to commit."""
    from gitmem.interop.importing import imported_data, over_pending_error

    _show_plan(imported_data(done), dry_run=done.dry_run)
    if done.refused is not None:
        raise over_pending_error(done.batch.source, done.refused, dry_run=done.dry_run)
    if done.landed is not None and done.landed.decision is not None:
        files = f"{ws.config.path('lessons')} and {ws.config.path('decisions')}"
        show(f"Wrote {', '.join(done.landed.lessons) or 'no lessons'} and {done.landed.decision}, which lists "
             f"the batch for your review; commit {files}.")


def _show_plan(data: dict[str, object], *, dry_run: bool) -> None:
    from gitmem.memory.display import printable

    verb = "would land" if dry_run else "lands"
    for kind, where in (("lessons", "LESSONS, an open lesson"), ("proposals", "DECISIONS, a proposal")):
        for item in data[kind]:  # type: ignore[attr-defined]
            also = f"; supersedes {item['supersedes']}" if item["supersedes"] else ""
            show(f"{item['file']}:{item['line']}: {verb} in {where}{also}: {printable(item['text'])[:100]}")
    for item in data["skipped"]:  # type: ignore[attr-defined]
        show(f"{item['file']}:{item['line']}: skipped, {item['reason']}")
    for item in data["not_read"]:  # type: ignore[attr-defined]
        what = (f"@{printable(item['target'])}" if item["kind"] == "import"
                else f"{item['kind']} (lines {item['target']})")
        show(f"{item['file']}:{item['line']}: {what} not read, {item['reason']}")
    if not data["lessons"] and not data["proposals"]:
        show("Nothing new to import.")


@click.command("export", epilog=exit_codes_help(EXPORT_EXIT_CODES))
@click.option("--to", "fmt", type=click.Choice(EXPORT_FORMATS), required=True, help="The format to write.")
@click.option("--out", metavar="DIR", type=click.Path(file_okay=False, path_type=str),
              help="The directory to write into.")
@click.option("--cli-location", is_flag=True,
              help="Write where the CLI reads memory for this project instead (claude: its auto memory folder; "
                   "codex: $CODEX_HOME/memories; gemini: ~/.gemini/GEMINI.md). Its own files there are never "
                   "overwritten: only files an earlier export wrote.")
@click.option("--force", is_flag=True,
              help="Replace the files another export format of this memory wrote there (MEMORY.md of a claude "
                   "export, for codex), which is refused without it; a file gitmem did not write, or one changed "
                   "since it was exported, is never replaced.")
@json_option
@workspace_option
def export_command(fmt: str, out: str | None, cli_location: bool, force: bool, as_json: bool,
                   workspace: str | None) -> int:
    """Write the memory in force as another CLI's memory files: the proven rules, open lessons, resolved
    decisions and the top NOW block, each naming its entry (`[gitmem: L-0003]`), an imported one with its
    origin, under a pointer back to this repository, which stays the record.

    Either --out DIR or --cli-location is required: nothing is written into a CLI's own memory unless asked.
    Importing an export back adds nothing.
    """
    from gitmem.cli.common import UsageError, open_memory
    from gitmem.interop.export import cli_memory_dir, export_memory

    if (out is None) == (not cli_location):
        raise UsageError("give --out DIR or --cli-location (one of them)")
    ws = open_memory(workspace)
    target = Path(out).expanduser() if out is not None else cli_memory_dir(ws, fmt, os.environ, Path.home())
    _show_export(export_memory(ws, fmt, target, force=force), as_json=as_json)
    return ExitCode.OK


def _show_export(done: Exported, *, as_json: bool) -> None:
    """The export as JSON (format, directory, files, entries) or one line."""
    if as_json:
        show_json({"format": done.fmt, "directory": str(done.directory), "files": done.files,
                   "entries": [item.ref for item in done.entries]}, indent=2)
    else:
        show(f"Exported {len(done.entries)} entries as {done.fmt} to {done.directory}: {', '.join(done.files)}")


COMMANDS = (import_command, export_command)
