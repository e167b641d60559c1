"""`gitmem init [DIR]`."""
from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from gitmem.cli.common import echo_json, json_option, say
from gitmem.errors import ExitCode, exit_codes_help

if TYPE_CHECKING:     # the library loads inside the command only
    from gitmem.scaffold.init import InitReport

# gitmem.scaffold.agent_clis.AGENTS (this module loads only click)
AGENTS = ("claude", "codex", "copilot", "cursor", "gemini", "opencode", "qwen")


# Every code the command can end with (its --help lists them, and 70 and 130, which any command can).
EXIT_CODES = {
    ExitCode.OK: "done",
    ExitCode.USAGE: "usage error, or a problem init could not fix (listed)",
}


@click.command("init", epilog=exit_codes_help(EXIT_CODES))
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path), default=".")
@click.option("--plain-hooks", "plain_hooks", is_flag=True,
              help="Also install gitmem's own git pre-commit and pre-push hooks, for repositories that do not use "
                   "the pre-commit framework (an existing hook is never replaced).")
@click.option("--agent", "agents", multiple=True, type=click.Choice(AGENTS),
              help="Also wire this agent CLI to the memory (repeatable): claude (.claude/settings.json hooks, MCP "
                   "server and allow-list, .mcp.json, CLAUDE.md), codex (AGENTS.md, .codex/config.toml, and the Codex "
                   "command for scheduled cycles in gitmem.yaml), copilot (.mcp.json, AGENTS.md, "
                   ".github/hooks/gitmem.json), cursor (.cursor/mcp.json, .cursor/rules/gitmem.mdc), "
                   "gemini (.gemini/settings.json, GEMINI.md), opencode (opencode.json, AGENTS.md), qwen "
                   "(.qwen/settings.json, AGENTS.md).")
@json_option
def init_command(directory: Path, plain_hooks: bool, agents: tuple[str, ...], as_json: bool) -> int:
    """Create the memory files, config, prompts, pre-commit config, .gitignore and workflows that are missing.

    DIR (default: the current folder) becomes the root of the agent's repository; `git init` runs there
    if it is not one yet. A non-empty folder inside another repository is refused: memory lives at a
    repository's root. Never overwrites a file. An existing .pre-commit-config.yaml gets the gitmem
    hooks added and an existing .gitignore the missing patterns, every other line kept as it was. When
    gitmem.yaml already maps the memory files to other names (or workspaces), those are the files created.
    Running it twice changes nothing.

    With --agent, agent settings are merged into existing files (only missing keys are added, and the hooks and
    servers an older gitmem wrote are brought up to date in place; a JSON file with comments keeps them, or is
    left alone with the line a lossless edit could not make) and the memory
    protocol goes into a managed block fenced by `<!-- gitmem:begin protocol -->` / `<!-- gitmem:end protocol
    -->`, updated in place without touching the text around it. Every hook and MCP entry runs the committed
    launcher .gitmem/gitmem, which finds gitmem in the repository's .venv, then on PATH, then as `python3 -m
    gitmem`, so the agent CLI finds it however it was started. A warning names an agent CLI that is not
    installed, with the command that installs it; `gitmem mcp` needs no extra, and only codex's TOML merge
    needs one (tomlkit, the `agents` extra: without it .codex/config.toml is left alone, with its install line).
    """
    from gitmem.scaffold.init import init
    from gitmem.scaffold.next_step import next_step, outside

    report = _refusal_alone(init(directory, agents, plain_hooks=plain_hooks))
    step = next_step(plain_hooks, report.hooks, report.hooks_in_place, report.hooks_path, outside(directory),
                     refused=bool(report.problems))
    if as_json:
        echo_json(json.dumps(_as_json(report, step), indent=2))
    else:
        _show(report, directory, step)
    return ExitCode.USAGE if report.problems else ExitCode.OK


def _refusal_alone(report: InitReport) -> InitReport:
    """After a refusal (a file init could not write or merge: `problems`) the report says what was done and the
    refusal, with its fix: no `then:` steps for an agent CLI whose config was not written, no warning (a CLI not
    on PATH), which would read as "done, and here is what is left", in text and in JSON alike."""
    from dataclasses import replace

    return replace(report, warnings=[], steps=[]) if report.problems else report


def _as_json(report: InitReport, step: str) -> dict[str, Any]:
    """`init --json`: the report's fields, then the next step."""
    from dataclasses import asdict

    return {**asdict(report), "next": step}


def _show(report: InitReport, directory: Path, step: str) -> None:
    """A line per thing init did (stdout), each problem or else each warning (stderr), the steps left to the
    human, and the next step last."""
    if report.initialised_git:
        click.echo(f"initialised a git repository in {directory}")
    for rel in report.created:
        click.echo(f"created     {rel}")
    for rel in report.updated:
        click.echo(f"updated     {rel} ({_what_was_added(rel)} added)")
    for rel in report.left_alone:
        click.echo(f"left alone  {rel} (exists)")
    for name in report.hooks:
        click.echo(f"git hook    {name}")
    for what in report.merge_driver:
        click.echo(f"merge       {what} (memory files merge by memory rules in git merge and git rebase)")
    for problem in report.problems:
        say(None, problem)
    for warning in report.warnings:
        say(None, f"warning: {warning}")
    for agent_step in report.steps:
        click.echo(f"then: {agent_step}")
    click.echo(f"next: {step}")


def _what_was_added(rel: str) -> str:
    """What `init` adds to a file that was already there (the names are gitmem.scaffold.init's)."""
    if rel == ".gitignore":
        return "patterns"
    return "gitmem hooks" if rel == ".pre-commit-config.yaml" else "gitmem settings"


COMMANDS = (init_command,)
