"""`gitmem status`: a one-screen dashboard of memory health. Colour on a terminal (not with NO_COLOR or
--no-color), plain text in a pipe."""
from __future__ import annotations

import json
import sys
from typing import Any

import click

from gitmem.cli.common import (
    colour_option,
    colour_wanted,
    echo,
    echo_json,
    json_option,
    open_workspace,
    workspace_option,
)
from gitmem.codes import DECISION_ANSWER_INCOMPLETE
from gitmem.errors import ExitCode, exit_codes_help
from gitmem.memory.lines import shortened
from gitmem.memory.log import Outcome


def _paint(colour: bool) -> Any:
    def paint(text: str, fg: str | None = None, bold: bool = False) -> str:
        return click.style(text, fg=fg, bold=bold) if colour else text
    return paint


def render_dashboard(data: dict[str, Any], *, colour: bool) -> str:
    """The dashboard as text; `data` is `Status.to_json()`."""
    paint = _paint(colour)
    lines = [paint(f"gitmem status · {data['now']}", bold=True)]
    last = data["last_cycle"]
    if last:
        tint = "red" if last["outcome"] == Outcome.NO_BUILD else "green"
        outcome = paint(last["outcome"], tint)
        task = shortened(last["task"], TEXT_MOST)
        lines.append(f"last cycle   {last['cycle']} · {last['when']} · {outcome} · {task}")
        lines += [paint(f"  warning: {warning}", "red") for warning in last.get("warnings", [])]
    else:
        lines.append("last cycle   none yet")
    counts = ", ".join(f"{n} {o}" for o, n in data["outcomes_today"].items() if n)
    lines.append(f"today        {data['cycles_today']} cycle(s)" + (f" ({counts})" if counts else "")
                 + (f" · last close {data['last_close']}" if data["last_close"] else ""))
    streak = data["streak"]
    span = (f" (cycle {streak['last']})" if streak["length"] == 1 else
            f" (cycles {streak['first']}–{streak['last']})" if streak["length"] else "")
    text = f"{streak['length']} no-build in a row{span}"
    lines.append("Rule 0       " + paint(text + (" — PROBLEM: ship something" if streak["problem"] else ""),
                                         "red" if streak["problem"] else "green"))
    lines.append(f"decisions    {len(data['pending'])} pending")
    for item in data["pending"]:
        age = paint(item["age"], "red" if item["stale"] else None)
        half = (f" — half an answer written in it ({DECISION_ANSWER_INCOMPLETE.code}): finish it"
                if item.get("answer_incomplete") else "")
        lines.append(f"  {item['id']} · {shortened(item['title'], TEXT_MOST)} ({age}){half}")
    room = f", {len(data['waiting_for_room'])} eligible but RULES is full" if data["waiting_for_room"] else ""
    lines.append(f"lessons      {len(data['awaiting'])} awaiting confirmation, {len(data['eligible'])} eligible "
                 f"now{room}")
    for item in data["awaiting"]:
        title = shortened(item["title"], TEXT_MOST)
        lines.append(f"  {item['id']} · {title} ({item['confirmations']}/{item['needed']})")
    lines.append(LIST_END)
    for item in data["eligible"]:
        note = f" — {item['note']}" if item.get("note") else ""
        lines.append("  " + paint(f"{item['id']} · {shortened(item['title'], TEXT_MOST)} (cycles "
                                  f"{', '.join(map(str, item['cycles']))}){note}", "yellow"))
    rules = data["rules"]
    full = rules["proven"] >= rules["proven_max"] or rules["lines"] > rules["lines_max"]
    lines.append("rules        " + paint(f"{rules['proven']}/{rules['proven_max']} proven, "
                                         f"{rules['lines']}/{rules['lines_max']} lines", "red" if full else None))
    for found in data.get("placeholders", []):
        lines.append("  " + paint(f"{found['path']}:{found['line']}: {found['code']} {found['message']}", "red"))
    for found in data.get("dated_ahead", []):
        lines.append(paint(f"warning: {found['path']}:{found['line']}: {found['what']} is dated {found['when']}, "
                           f"{found['ahead']} ahead of this clock: the clock that wrote it runs fast (set it "
                           "right); entries after it keep their own clock's time", "red"))
    branches = data.get("branches", [])
    if branches:
        here = sum(1 for branch in branches if branch["only_on_this_machine"])
        done = sum(1 for branch in branches if branch.get("deletable"))
        waiting = f"{len(branches) - done} waiting on you" + (f", {done} to delete (answered No)" if done else "")
        lines.append("branches     " + paint(waiting + (
            f", {here} only on this machine" if here else "") + " (`gitmem status --json` says how)", "yellow"))
    for branch in branches:
        where = "ONLY ON THIS MACHINE: push it" if branch["only_on_this_machine"] else "on " + ", ".join(
            branch["remotes"])
        lines.append("  " + paint(f"{branch['name']} · {branch['kind']} · {branch['commits']} commit(s) · {where}",
                                  "red" if branch["only_on_this_machine"] else None) + f" — {branch['hint']}")
    invalid = data.get("invalid", [])
    lines += _diagnostics(paint, "invalid", f"{len(invalid)} error(s) in memory as it stands: the next cycle "
                          "refuses to start", invalid)
    unreadable = data.get("unreadable", [])
    lines += _diagnostics(paint, "unreadable", f"{len(unreadable)} line(s) of the LOG entries shown are not UTF-8: "
                          "every reader shows U+FFFD there", unreadable)
    if data.get("missing"):
        lines.append("missing      " + paint(", ".join(data["missing"]) + " (run `gitmem init`)", "red"))
    for found in data.get("setup", []):
        lines.append("setup        " + paint(f"{found['path']}:{found['line']}: {found['code']} {found['message']}",
                                             "yellow") + _fix(found))
    budget = data["budget"]
    if budget.get("tokens") is None:
        lines.append("budget       " + paint(f"over the hard limit: {budget.get('error', '')}", "red"))
    else:
        tint = "red" if budget["tokens"] > budget["soft"] else "green"
        lines.append("budget       " + paint(f"{budget['tokens']} tokens", tint)
                     + f" of {budget['limit']} (soft {budget['soft']}, hard {budget['hard']}; {budget['source']})")
    recall = data.get("recall") or {}
    if recall:
        detail = recall["model"] or recall["note"]
        lines.append("recall       " + paint(recall["mode"], "red" if recall["mode"] == "unavailable" else None)
                     + (f" ({detail})" if detail else ""))
    return "\n".join(fit(lines)) + "\n"


SCREEN = 40            # lines: one screen at any scale of history
TEXT_MOST = 100        # characters of the agent's text (a task, a title) a line shows: it wraps over no screen
MOST_PER_LIST = 5
LIST_END = "\0"        # ends a list whose next line is another list under the same heading


def _diagnostics(paint: Any, label: str, summary: str, found: list[dict[str, Any]]) -> list[str]:
    """A section of `path:line: GMnnn` lines under its label and summary, in red; none when nothing was found."""
    if not found:
        return []
    shown = [paint(f"{item['path']}:{item['line']}: {item['code']} {item['message']}", "red") + _fix(item)
             for item in found]
    return [f"{label:<13}" + paint(summary, "red"), *("  " + line for line in shown)]


def _fix(found: dict[str, Any]) -> str:
    """` — fix: …` after a problem's line; nothing for a code that has no fix to say (GM508's message is it)."""
    return f" — fix: {found['fix']}" if found.get("fix") else ""


def fit(lines: list[str], limit: int = SCREEN) -> list[str]:
    """At most `limit` lines: each list (its items are the indented lines under a heading) keeps its first
    items and ends with `+N more`, fewer items a list the longer the dashboard would be."""
    groups: list[list[str]] = []
    ended = False
    for line in lines:
        if line == LIST_END:
            ended = True
            continue
        if line.startswith("  ") and groups and groups[-1][0].startswith("  ") and not ended:
            groups[-1].append(line)
        else:
            groups.append([line])
        ended = False
    lists = [g for g in groups if g[0].startswith("  ")]
    fixed = len(groups) - len(lists)
    for cap in range(MOST_PER_LIST, 0, -1):
        size = fixed + sum(len(g) if len(g) <= cap else cap + 1 for g in lists)
        if size <= limit:
            break
    out: list[str] = []
    for group in groups:
        if group[0].startswith("  ") and len(group) > cap:
            hidden = len(group) - cap
            out += [*group[:cap], f"  +{hidden} more"]
        else:
            out += group
    return out


# Every code the command can end with (its --help lists them, and 70 and 130, which any command can).
EXIT_CODES = {
    ExitCode.OK: "done",
    ExitCode.USAGE: "usage or config error, not a git repository, no memory here",
}


@click.command("status", epilog=exit_codes_help(EXIT_CODES))
@json_option
@colour_option
@workspace_option
def status(as_json: bool, workspace: str | None) -> int:
    """One screen of memory health: last cycle, today, Rule 0 streak, decisions waiting, lessons, rules, budget,
    recall mode, and the branches gitmem left for you (salvage, proposal, kept-local, side branches of a push
    that conflicted or was refused), with what to do with each.

    At most 40 lines at any size of history: long lists end with `+N more` (`gitmem pending` lists every
    decision). Flags template placeholders left in RULES.md, and memory that is invalid as it stands (a bad
    heading committed without the check), with its fix, and bytes that are not UTF-8 in the LOG entries it reads
    (GM902; `gitmem check --worktree` reads every byte of every file). Exit 2 in a repository without memory.
    """
    from gitmem.memory.display import printable_data
    from gitmem.secrets import scrub_data
    from gitmem.views.status import collect_status

    # The agent's text: no escapes, and no secret value history still holds.
    data = scrub_data(printable_data(collect_status(open_workspace(workspace)).to_json()))
    if as_json:
        echo_json(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        echo(render_dashboard(data, colour=colour_wanted(sys.stdout)), nl=False)
    return ExitCode.OK


COMMANDS = (status,)
