"""`gitmem report`: what months of an agent did, from its memory in git, as one HTML page or a Markdown summary.

`collect` reads a workspace into a `WorkspaceReport` (plain values, redacted); `html.render_html` and
`summary.render_markdown` turn reports into text. Nothing here is imported on the `gitmem check` path.
"""
from __future__ import annotations

import os
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from gitmem.errors import GitmemError
from gitmem.workspace import Clock, Workspace

if TYPE_CHECKING:
    from gitmem.report.model import WorkspaceReport


def workspaces(ws: Workspace, all_workspaces: bool) -> list[Workspace]:
    """`ws` alone, or every workspace of its gitmem.yaml (after the top-level memory, when that logged a cycle)."""
    if not all_workspaces or not ws.config.workspaces:
        return [ws]
    found = [ws] if not ws.name and ws.last_log_cycle() > 0 else []
    return found + [ws.with_config(ws.config.with_workspace(name)) for name, _ in ws.config.workspaces]


def build(ws: Workspace, *, fmt: str = "html", since: date | None = None, until: date | None = None,
          all_workspaces: bool = False, clock: Clock | None = None) -> str:
    """The report of `ws` (or of all its workspaces) as an HTML page (`html`) or Markdown (`summary`)."""
    found = reports(ws, fmt=fmt, since=since, until=until, all_workspaces=all_workspaces, clock=clock)
    return render_reports(found, fmt)


def render_reports(found: list[WorkspaceReport], fmt: str) -> str:
    """Reports as an HTML page (`html`) or Markdown (`summary`)."""
    from gitmem.report import html, summary

    return summary.render_markdown(found) if fmt == "summary" else html.render_html(found)


def reports(ws: Workspace, *, fmt: str = "html", since: date | None = None, until: date | None = None,
            all_workspaces: bool = False, clock: Clock | None = None) -> list[WorkspaceReport]:
    """The report of each workspace `build` shows, for the window `fmt` takes (a summary's: 14 days)."""
    from gitmem.report import summary
    from gitmem.report.collect import collect_report

    chosen = workspaces(ws, all_workspaces)
    if fmt == "summary":
        last = until or (clock or ws.clock())().astimezone(ws.config.tzinfo()).date()
        return [collect_report(w, since=since or summary.window(last), until=last, clock=clock) for w in chosen]
    return [collect_report(w, since=since, until=until, clock=clock) for w in chosen]


def report_target(ws: Workspace, out: str | None, fmt: str) -> Path | None:
    """Where the report goes: the file `out` names, None for stdout (`out` is `-`, or a summary by default), and
    by default an html page in the state directory (.git/gitmem/report.html), never in the work tree, which a
    cycle needs clean."""
    from gitmem.workspace.statedir import state_directory

    if out == "-" or (out is None and fmt == "summary"):
        return None
    if out is None:
        return state_directory(ws.state_dir or ws.root) / "report.html"
    taken = _taken(ws, Path(out))
    if taken:
        raise GitmemError(f"cannot write {out}: it is {taken}, which a report never replaces; choose another --out")
    return Path(out)


def _taken(ws: Workspace, target: Path) -> str:
    """What `target` is when a page must not replace it: a memory file of any workspace or gitmem.yaml (their
    uncommitted lines would be lost), or a file of the git directory (its config, HEAD, a hook: no longer a
    repository), but for gitmem's own state directory; "" for anywhere else. Judged where the path leads."""
    from gitmem import gitio
    from gitmem.config import CONFIG_NAME

    where = Path(os.path.realpath(target))
    root = Path(os.path.realpath(ws.root))
    if where in {root / rel for rel in [CONFIG_NAME, *(p for paths in ws.config.workspace_paths().values()
                                                       for p in paths.values())]}:
        return "a memory file" if where.name != CONFIG_NAME or where.parent != root else "gitmem's config"
    try:
        repo = ws.repo
    except gitio.RepoError:             # a plain directory of memory files: no git directory to keep
        return ""
    state = Path(os.path.realpath(gitio.state_dir(repo)))
    for git_dir in {Path(os.path.realpath(gitio.git_dir(repo))), Path(os.path.realpath(gitio.common_dir(repo)))}:
        if where.is_relative_to(git_dir) and not where.is_relative_to(state):
            return "inside the git directory"
    return ""
