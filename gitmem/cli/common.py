"""What several commands share: finding the repo and config, the --workspace and --format options."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from gitmem import exitcodes


def known_errors() -> tuple[type[Exception], ...]:
    from gitmem.config import ConfigError
    from gitmem.repo import RepoError
    from gitmem.store import WriteRefused

    return (ConfigError, RepoError, WriteRefused)


class UsageError(click.ClickException):
    exit_code = exitcodes.USAGE


def workspace_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--workspace", "-w", metavar="NAME", default=None,
                        help="Use the memory of this workspace from `workspaces:` in gitmem.yaml.")(func)


def format_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--format", "fmt", type=click.Choice(["text", "github", "json"]), default="text",
                        show_default=True, help="Output format: text lines, GitHub annotations, or JSON.")(func)


def json_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON for other tools.")(func)


@dataclass
class Context:
    repo: Any           # pygit2.Repository
    root: Path
    config: Any         # gitmem.config.Config


def open_context(workspace: str | None, path: str | Path | None = None) -> Context:
    """The repository around `path` (default: the current directory) and its config."""
    from gitmem import repo as git
    from gitmem.config import load_config

    repository = git.open_repo(path)
    root = git.root(repository)
    config = load_config(root, workspace=workspace)
    for warning in config.warnings:
        click.echo(f"warning: {warning}", err=True)
    return Context(repository, root, config)


def append_env_file(variable: str, text: str) -> None:
    """Append to the file named by $VARIABLE (GitHub Actions' GITHUB_OUTPUT, GITHUB_STEP_SUMMARY), if set."""
    import os

    path = os.environ.get(variable)
    if path:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(text)
