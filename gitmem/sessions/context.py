"""The memory an interactive session starts with: compact, and bounded whatever the history or RULES size.

Claude Code puts a SessionStart hook's text into the session, but an output over about 10,000 characters is
replaced by a 2 KB preview (an 18.4 KB one was). So every part has its own character budget, each line is
cut to a width, and what does not fit is counted and named ("… 12 more (`gitmem pending`)"). The parts:
proven rules (RULES' one-line rules, without their provenance), the top NOW block, DECISIONS Pending and
newly resolved (decided from history, like a cycle's: gitmem.cycle.baseline), one line per recent LOG entry,
and the current ROADMAP section's title. The whole stays under `LIMIT` characters; `gitmem context` and the
MCP `context` tool give the full reading budget when a session needs it.
"""
from __future__ import annotations

from dataclasses import dataclass

from gitmem.memory import decisions, rules
from gitmem.memory.lines import one_line
from gitmem.memory.log import LogEntry
from gitmem.secrets import scrub
from gitmem.workspace import Workspace, cyclelock, runner_cycle

LIMIT = 9000                  # characters: the promise (Claude Code previews hook output over ~10,000)
LOG_LINES = 5                 # recent LOG entries, one line each
WIDTH = 240                   # the longest line of any part
# Characters per part. With the fixed text (the protocol, the ROADMAP title, the pointers: under 1,000 characters)
# they sum to under LIMIT: 7,900 + 1,000 < 9,000.
BUDGETS = {"rules": 2900, "now": 1300, "pending": 1400, "resolved": 1000, "log": 1300}
PROTOCOL = ("Protocol: this session is cycle {cycle} (interactive). Write exactly one LOG entry and one NOW block "
            "for it before you finish, with the gitmem MCP tools (log_entry, now_block) or `gitmem log add` / "
            "`gitmem now add`; never edit the memory files by hand. Questions for the human go to ask_decision "
            "(`gitmem decision ask`): only the human answers them. Use recall (`gitmem recall`) only when the "
            "task needs the past. Commit the memory files together with your work, in one commit.")
# LOG's last entry is written but not committed: the cycle is still open (a session lasts until its entry is
# committed, gitmem.memory_writer), so a new entry is refused until that commit and other memory joins that cycle.
OPEN_PROTOCOL = ("Protocol: this session continues cycle {cycle} (interactive): its LOG entry is in {log} but not "
                 "committed yet, and a session writes one LOG entry until it is committed, so a new one is refused "
                 "until then. Add to cycle {cycle} (its NOW block if missing, lessons, ask_decision: only the human "
                 "answers), never editing the memory files by hand. Use recall only when the task needs the past. "
                 "Commit the memory files with your work, in one commit.")

# A cycle or a close of another process runs in the checkout: what the work tree holds uncommitted is its agent's
# (LOG's last entry too: its cycle number is not this session's), and the session's memory writes are refused until
# it ends (GM722), when the runner has committed it.
RUNNING_PROTOCOL = ("Protocol: a {what} is running in this checkout ({holder}): the uncommitted files you see are its "
                    "agent's, not this session's, and memory writes are refused until it ends. Then write exactly one "
                    "LOG entry and one NOW block for this session (interactive) with the gitmem MCP tools (log_entry, "
                    "now_block) or `gitmem log add` / `gitmem now add`, never editing the memory files by hand, and "
                    "commit them with your work, in one commit.")


@dataclass(frozen=True)
class Part:
    title: str
    lines: tuple[str, ...]
    more: str = ""            # what was left out, and where to find it


def session_context(ws: Workspace) -> str:
    """The compact memory for a session starting (or resuming after a compaction) in `ws`."""
    where = f" (workspace {ws.name})" if ws.name else ""
    head = [f"# gitmem memory{where}", _protocol(ws)]
    body = [_render(part, BUDGETS[key]) for key, part in _parts(ws).items()]
    road = _roadmap_title(ws)
    tail = [f"ROADMAP now: {road}" if road else "",
            "More: `gitmem context` (the full cycle context), `gitmem pending`, `gitmem status`, `gitmem recall`."]
    text = scrub("\n\n".join(chunk for chunk in [*head, *body, *tail] if chunk) + "\n")
    return text if len(text) <= LIMIT else text[:LIMIT - 2] + "…\n"     # the parts' budgets already keep it under


def _protocol(ws: Workspace) -> str:
    if runner_cycle() is not None:
        return PROTOCOL.format(cycle=ws.cycle_for("log"))
    holder = cyclelock.running_elsewhere(ws.state_dir) if ws.state_dir is not None else None
    if holder is not None:
        return RUNNING_PROTOCOL.format(what=holder.what, holder=holder.describe())
    last = ws.last_log_cycle()
    if last and ws.uncommitted_log_cycle(last):
        return OPEN_PROTOCOL.format(cycle=last, log=ws.config.path("log"))
    return PROTOCOL.format(cycle=ws.cycle_for("log"))


def _parts(ws: Workspace) -> dict[str, Part]:
    from gitmem.cycle.baseline import resolved_before
    from gitmem.cycle.budget import shown_decisions, top_now_block

    config = ws.config
    proven = rules.parse(ws.read("rules")).proven
    rules_part = Part(f"Proven rules ({config.path('rules')})",
                      tuple(f"- {rule.id} · {rule.text}" for rule in proven) or ("(none yet)",),
                      "see " + config.path("rules"))
    top = top_now_block(ws)
    now_part = Part(f"Top NOW block ({config.path('now')})", tuple(top.render().splitlines()) if top else
                    ("(no NOW block yet)",), "read " + config.path("now"))
    before = resolved_before(ws) if ws.state_dir is not None else None
    doc, fresh = shown_decisions(ws.root, config.path("decisions"), before)
    waiting = decisions.waiting(doc, ws.clock()())       # Pending, from the head of DECISIONS only
    pending_part = Part(f"Pending decisions ({config.path('decisions')})",
                        tuple(_pending_line(item) for item in waiting) or ("(none)",), "`gitmem pending`")
    resolved_part = Part("Newly resolved: act on these, do not redo them",
                         tuple(_resolved_line(item) for item in fresh) or ("(none)",),
                         "see " + config.path("decisions"))
    entries = ws.log_tail(LOG_LINES).entries[-LOG_LINES:]
    log_part = Part(f"Recent LOG ({config.path('log')}, newest last)",
                    tuple(_log_line(entry) for entry in entries) or ("(no LOG entries yet)",), "")
    return {"rules": rules_part, "now": now_part, "pending": pending_part, "resolved": resolved_part,
            "log": log_part}


def _render(part: Part, budget: int) -> str:
    """The part's title and as many of its lines (each cut to WIDTH) as fit `budget`, then what was left out."""
    lines = [f"## {part.title}"]
    used = len(lines[0]) + 1
    shown = 0
    for index, line in enumerate(part.lines):
        cut = _cut(line)
        room = budget - (60 if index + 1 < len(part.lines) else 0)    # 60: room for the "… N more" line
        if used + len(cut) + 1 > room:
            break
        lines.append(cut)
        used += len(cut) + 1
        shown += 1
    left = len(part.lines) - shown
    if left:
        lines.append(f"… {left} more" + (f" ({part.more})" if part.more else ""))
    return "\n".join(lines)


def _cut(line: str, width: int = WIDTH) -> str:
    indent = line[:len(line) - len(line.lstrip())]
    text = indent + one_line(line)
    return text if len(text) <= width else text[:width - 1] + "…"


def _pending_line(item: decisions.Waiting) -> str:
    recommendation = f" — recommends: {item.recommendation}" if item.recommendation else ""
    return f"- {item.id} · {item.title} ({item.age} old){recommendation}"


def _resolved_line(item: decisions.Decision) -> str:
    answer = one_line(item.get("Answer") or "")
    return f"- {item.id} · {item.title} — answer: {answer or '(see DECISIONS)'}"


def _log_line(entry: LogEntry) -> str:
    if entry.cycle is None:
        return f"- {entry.when} · close"
    session = " · interactive" if entry.interactive else ""
    task = one_line(entry.get("Task") or "")
    result = one_line(entry.get("Result") or "")
    return f"- cycle {entry.cycle} · {entry.outcome}{session} · {entry.when} · {task} → {result}"


def _roadmap_title(ws: Workspace) -> str:
    from gitmem.cycle.budget import roadmap_title

    title = roadmap_title(ws.root, ws.config.path("roadmap"))
    return _cut(title) if title else ""
