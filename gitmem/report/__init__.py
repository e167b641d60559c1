"""`gitmem report`: what months of an agent did, from its memory in git, as one HTML page or a Markdown summary.

`collect` reads a workspace into a `WorkspaceReport` (plain values, redacted); `html.render_html` and
`summary.render_markdown` turn reports into text. Nothing here is imported on the `gitmem check` path.
"""
from __future__ import annotations

from datetime import date
from pathlib import Path

from gitmem.workspace import Clock, Workspace


def workspaces(ws: Workspace, all_workspaces: bool) -> list[Workspace]:
    """`ws` alone, or every workspace of its gitmem.yaml (after the top-level memory, when that logged a cycle)."""
    if not all_workspaces or not ws.config.workspaces:
        return [ws]
    found = [ws] if not ws.name and ws.last_log_cycle() > 0 else []
    return found + [ws.with_config(ws.config.with_workspace(name)) for name, _ in ws.config.workspaces]


def build(ws: Workspace, *, fmt: str = "html", since: date | None = None, until: date | None = None,
          all_workspaces: bool = False, clock: Clock | None = None) -> str:
    """The report of `ws` (or of all its workspaces) as an HTML page (`html`) or Markdown (`summary`)."""
    from gitmem.report import html, summary
    from gitmem.report.collect import collect_report

    chosen = workspaces(ws, all_workspaces)
    if fmt == "summary":
        last = until or (clock or ws.clock())().astimezone(ws.config.tzinfo()).date()
        reports = [collect_report(w, since=since or summary.window(last), until=last, clock=clock) for w in chosen]
        return summary.render_markdown(reports)
    return html.render_html([collect_report(w, since=since, until=until, clock=clock) for w in chosen])


def report_target(ws: Workspace, out: str | None, fmt: str) -> Path | None:
    """Where the report goes: the file `out` names, None for stdout (`out` is `-`, or a summary by default), and
    by default an html page in the state directory (.git/gitmem/report.html), never in the work tree, which a
    cycle needs clean."""
    from gitmem.workspace.statedir import state_directory

    if out == "-" or (out is None and fmt == "summary"):
        return None
    return Path(out) if out is not None else state_directory(ws.state_dir or ws.root) / "report.html"
