"""One agent of the fleet, read: its repository opened (a local work tree in place, a URL through its read-only
copy in the cache), then one row per workspace with the same bounded reads as `gitmem status` and
`gitmem pending` (`gitmem.views`), and, for the page, the agent's own report (`gitmem.report`).

Everything here runs in a worker process and returns plain, picklable values. Every text that leaves it is
masked and made printable (`gitmem.memory.display.masked_printable`): memory is the agent's writing, and an error
may quote a URL or git's output, so neither may carry a secret or a terminal escape.
"""
from __future__ import annotations

import hashlib
import os
import re
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

from gitmem import gitio
from gitmem.cycle import schedule
from gitmem.errors import GitmemError
from gitmem.fleet.fleetfile import AgentEntry, github_path
from gitmem.memory import decisions, log
from gitmem.memory.clock_skew import CLOCK_SKEW, spoken
from gitmem.memory.decisions import age_text
from gitmem.memory.display import masked_printable
from gitmem.memory.timestamps import parse_timestamp
from gitmem.secrets import scrub
from gitmem.workspace import Workspace

TOKEN_VARIABLE = "GITMEM_FLEET_TOKEN"
# What git says when a remote wants credentials it did not get, or refuses the ones it got: over https (GitHub
# asks for a user name, or answers "not found" to a token that cannot see a private repository) and over ssh.
CREDENTIALS_REFUSED = re.compile(r"could not read (Username|Password)|Authentication failed|Permission denied "
                                 r"\(publickey|repository '[^']*' not found|Repository not found", re.IGNORECASE)
CREDENTIALS_HINT = (f"a private repository is read with {TOKEN_VARIABLE} (a token with Contents: read-only on it; "
                    "sent to GitHub only) or with git's own credentials (a credential helper, an SSH key): see "
                    "docs/fleet.md, Credentials")
OK, STALLED, STREAK, WAITING, NEW, UNREADABLE = "ok", "stalled", "rule 0 streak", "waiting on you", "no cycles yet", \
    "unreadable"
OVER_BUDGET = "over budget"        # gitmem.fleet.spending judges it
# The last cycle is dated ahead of the fleet's clock (the clock that wrote it ran fast): its age, and so a stall,
# cannot be judged until a cycle dated right lands.
CLOCK_AHEAD = "clock ahead"
INACTIVE_NOTE = ("GitHub disables a schedule after 60 days without activity, and a broken workflow looks the same: "
                 "see the repository's Actions tab")


@dataclass(frozen=True)
class InboxItem:
    """One decision in the human's inbox."""

    agent: str
    workspace: str
    id: str
    title: str
    recommendation: str
    asked: str
    age_days: float | None
    age: str
    answer_at: str                  # path:line, or the file's URL on GitHub at the line
    answer_incomplete: bool = False  # half an answer written in it (decision-answer-incomplete): it waits


@dataclass
class AgentRow:
    """One agent (one workspace of it) in `gitmem fleet status`."""

    agent: str
    workspace: str
    repo: str
    branch: str
    verdict: str = OK
    why: str = ""                   # the verdict's reason; an unreadable row's is its `error`, said once (`said`)
    error: str | None = None
    last_cycle: dict[str, Any] | None = None
    cycles_today: int = 0
    streak: dict[str, Any] = field(default_factory=dict)
    pending: int = 0
    stale: int = 0
    last_close: str | None = None
    waiting_branches: list[str] = field(default_factory=list)
    deletable_branches: list[str] = field(default_factory=list)    # proposals whose decision was answered No
    interval_seconds: int | None = None
    stall_after_seconds: int | None = None
    tokens_today: int = 0
    cost_today: float = 0.0
    over_budget: str = ""           # which caps today's spending is over (fleet.yaml's, its gitmem.yaml's); "" if none
    # The age of the newest cycle the runner wrote: what a stall, a fast clock and the catch-up are judged by. An
    # interactive session's entry (`last_cycle` may be one) is dated by the human's clock, whenever the human works.
    scheduled_age_days: float | None = None

    @property
    def label(self) -> str:
        return f"{self.agent}/{self.workspace}" if self.workspace else self.agent

    @property
    def said(self) -> str:
        """Why the row has its verdict, as the views print it: the reason, or what kept it from being read."""
        return self.why or self.error or ""


def unreadable_row(entry: AgentEntry, error: str, *, workspace: str | None = None, repo: str | None = None,
                   branch: str | None = None) -> AgentRow:
    """The row of an agent (a workspace of it) that could not be read: its error in `error` alone."""
    return AgentRow(entry.name, entry.workspace or "" if workspace is None else workspace,
                    entry.repo if repo is None else repo, entry.branch or "" if branch is None else branch,
                    UNREADABLE, error=error)


@dataclass
class AgentReading:
    row: AgentRow
    inbox: list[InboxItem] = field(default_factory=list)
    report: Any = None              # gitmem.report.model.WorkspaceReport, when the page was asked for
    page: str = ""                  # the agent's own report page


def cache_dir(entry: AgentEntry, environ: dict[str, str]) -> Path:
    digest = hashlib.sha256(f"{entry.repo}\0{entry.branch or ''}".encode()).hexdigest()[:16]
    return gitio.cache_home(environ) / "fleet" / f"{entry.name}-{digest}"


def open_agent(entry: AgentEntry, base: Path, *, timeout: float, offline: bool = False) -> tuple[Workspace, str, bool]:
    """(the agent's top-level workspace, the branch read, whether it is a fetched copy). `offline` reads a URL's
    copy as the last fetch left it."""
    if entry.is_url:
        where = cache_dir(entry, dict(os.environ))
        if offline:
            if not (where / ".git").is_dir():
                raise GitmemError(f"{entry.repo} has not been fetched yet; run once without --offline")
            if gitio.last_fetch_failed(where):     # its copy is the last good one: an agent as it was, not as it is
                raise GitmemError(f"the last fetch of {entry.repo} failed, so its copy is older than the agent; "
                                  "it is read again once a fetch succeeds (run without --offline)")
            copy = gitio.open_repo(where)
            return Workspace.for_repo(copy), gitio.copy_branch(copy, entry.branch), True
        try:
            repo, branch = gitio.fetch_copy(where, entry.repo, entry.branch, timeout=timeout,
                                            environ=dict(os.environ), token_variable=TOKEN_VARIABLE)
        except gitio.GitCommandError as err:
            if not CREDENTIALS_REFUSED.search(str(err)):
                raise
            raise gitio.GitCommandError(f"{err}: {CREDENTIALS_HINT}", err.output) from None
        return Workspace.for_repo(repo), branch, True
    path = entry.local_path(base)
    if not path.is_dir():
        # A relative path is the fleet file's folder's, which need not be the folder the command runs in.
        relative = not os.path.isabs(os.path.expanduser(entry.repo))
        raise GitmemError(f"{entry.repo} is not a directory" + (f" ({path}: a relative repo is read from the fleet "
                                                                "file's folder)" if relative else ""))
    repo = gitio.open_repo(path)
    top = gitio.work_tree(repo)
    if top is None:       # a server's or a mirror's: no files checked out to read in place
        raise GitmemError(f"{entry.repo} is a bare repository, which has no files to read in place; give it as a "
                          f"URL (repo: {path.as_uri()}), and it is read through a copy like a remote")
    if top.resolve() != path.resolve():
        raise GitmemError(f"{entry.repo} is not the top of a git work tree")
    return Workspace.for_repo(repo), gitio.current_branch(repo) or "HEAD", False


def read_agent(entry: AgentEntry, base: Path, moment: datetime, *, timeout: float, with_page: bool,
               offline: bool = False) -> list[AgentReading]:
    """One reading per workspace of the agent; a single reading with the error when it cannot be read."""
    shown = scrub(entry.repo)
    try:
        # A URL's copy is read by one fleet command at a time, from its fetch to the end of the reading.
        with gitio.copy_turn(cache_dir(entry, dict(os.environ)), wait=timeout) if entry.is_url else nullcontext():
            return _readings(entry, base, moment, shown, timeout=timeout, with_page=with_page, offline=offline)
    except GitmemError as err:
        message = masked_printable(str(err).strip() or type(err).__name__)
        return [AgentReading(unreadable_row(entry, message, repo=shown))]


def _readings(entry: AgentEntry, base: Path, moment: datetime, shown: str, *, timeout: float, with_page: bool,
              offline: bool) -> list[AgentReading]:
    from gitmem.report import workspaces

    top, branch, copy = open_agent(entry, base, timeout=timeout, offline=offline)
    chosen = [top.with_config(top.config.with_workspace(entry.workspace))] if entry.workspace else \
        workspaces(top, all_workspaces=True)
    crons = schedule.workflow_crons(top.root)
    waiting = [masked_printable(name) for name in gitio.waiting_branches(top.repo, copy=copy)]
    found = []
    for ws in chosen:
        row = AgentRow(entry.name, masked_printable(ws.name), shown, masked_printable(branch),
                       waiting_branches=waiting, interval_seconds=schedule.interval_seconds(crons),
                       stall_after_seconds=entry.stall_after)
        try:
            found.append(_read_workspace(entry, ws, row, moment, branch, with_page))
        except GitmemError as err:    # one workspace's problem leaves the others (a bug is a bug: exit 70)
            found.append(AgentReading(unreadable_row(entry, masked_printable(str(err).strip() or type(err).__name__),
                                                     workspace=row.workspace, repo=shown, branch=row.branch)))
    return found


def _read_workspace(entry: AgentEntry, ws: Workspace, row: AgentRow, moment: datetime, branch: str,
                    with_page: bool) -> AgentReading:
    from gitmem.cycle.allowance import Caps, spent_today
    from gitmem.views import health
    from gitmem.views.kept_branches import proposal_answer
    from gitmem.views.pending import pending
    from gitmem.views.status import activity

    missing = health.require_memory(ws)
    if missing:      # read without it, a LOG would be "no cycles yet" and a DECISIONS "nothing waits"
        one = len(missing) == 1
        raise GitmemError(f"{', '.join(missing)} {'is' if one else 'are'} missing from its memory, as `gitmem status` "
                          f"there says: restore {'it' if one else 'them'} from git (`git checkout HEAD -- "
                          f"{' '.join(missing)}`), or make {'it' if one else 'them'} with `gitmem init`")
    local = moment.astimezone(ws.config.tzinfo())
    done = activity(ws, local)
    row.cycles_today, row.streak = done["cycles_today"], done["streak"]
    row.last_close = masked_printable(done["last_close"]) if done["last_close"] else None
    last = done["last_cycle"]
    if last is not None:
        stamp = parse_timestamp(last["when"])
        age = (local - stamp.moment).total_seconds() / 86400 if stamp is not None else None
        row.last_cycle = {"cycle": last["cycle"], "when": masked_printable(last["when"]),
                          "outcome": masked_printable(last["outcome"]), "task": masked_printable(last["task"]),
                          "age_days": round(age, 3) if age is not None else None, "age": age_text(age)}
    scheduled = log.last_runner_cycle(ws.log_source())
    if scheduled is not None:
        # To the second (five places of a day): a stall_after of minutes is judged and said in minutes.
        row.scheduled_age_days = round((local - scheduled.when.moment).total_seconds() / 86400, 5)
    path = ws.config.path("decisions")
    inbox = []
    for item in pending(ws, now=local):
        inbox.append(InboxItem(entry.name, row.workspace, item.id, masked_printable(item.title),
                              masked_printable(item.recommendation),
                              masked_printable(str(item.asked)) if item.asked else "",
                              round(item.age_days, 2) if item.age_days is not None else None, item.age,
                              answer_at(entry, path, item.line, branch), item.answer_incomplete))
        row.stale += item.days > ws.config.close.stale_decision_days
    row.pending = len(inbox)
    spent = spent_today(ws, local)
    row.tokens_today, row.cost_today = spent.tokens, spent.cost
    # fleet.yaml's cap, and the agent's own (gitmem.yaml's `cycle:`), over which its cycles refuse to start: a
    # cycle dispatched then would only refuse again.
    own = spent.over(Caps.of(ws.config))
    row.over_budget = "; ".join(
        over for over in (spent.over(entry.caps), own and f"{own}, its own cap in gitmem.yaml") if over)
    doc = decisions.parse(ws.read("decisions"))
    row.deletable_branches = [name for name in row.waiting_branches
                              if (answer := proposal_answer(name, doc)) is not None and answer.declined]
    row.verdict, row.why = verdict(row)
    reading = AgentReading(row, inbox)
    if with_page:
        from gitmem.report.collect import collect_report
        from gitmem.report.html import render_html

        reading.report = collect_report(ws, clock=lambda: local)
        reading.page = render_html([reading.report])
    return reading


def verdict(row: AgentRow) -> tuple[str, str]:
    """What the human should make of the row, and why, in a few words: the first of NEED_ORDER
    (gitmem.fleet.need) that holds. Without a cycle, a stall cannot be judged, but whatever else the agent
    needs (a decision a session asked before the first cycle, a branch) still comes before "no cycles yet"."""
    last = row.last_cycle
    limit = row.stall_after_seconds or (2 * row.interval_seconds if row.interval_seconds else None)
    days = row.scheduled_age_days        # the runner's last cycle: a session's entry judges no schedule
    age = days * 86400 if days is not None else 0
    if -age > CLOCK_SKEW.total_seconds():   # else "0h ago, ok" while the clock was fast, however dead the schedule
        return CLOCK_AHEAD, (f"last cycle dated {spoken(timedelta(seconds=-age))} ahead of this clock: the clock "
                             "that wrote it runs fast, so a stall cannot be judged until a cycle dated right lands")
    if days is not None and limit is not None and age > limit:
        source = "stall_after" if row.stall_after_seconds else "twice its schedule's interval"
        since = "" if last is not None and last.get("age_days") == round(days, 3) else "; sessions since do not count"
        # Over a cap, its cycles refuse to start (GM750): that is the stall's cause, and the human's to lift.
        cause = f"; over budget ({row.over_budget}): its cycles refuse to start" if row.over_budget else ""
        # In minutes where hours would say "0h ago, over 0h" (a stall_after of 10m to a few hours).
        return STALLED, (f"last cycle by the runner {spoken(timedelta(seconds=round(age)))} ago, over "
                         f"{spoken(timedelta(seconds=limit))} ({source}{since}){cause}")
    if row.over_budget:
        return OVER_BUDGET, row.over_budget
    if row.streak.get("problem"):
        return STREAK, f"{row.streak['length']} no-build cycles in a row"
    review = [name for name in row.waiting_branches if name not in row.deletable_branches]
    done = (f"{len(row.deletable_branches)} proposal branch(es) answered No: delete them"
            if row.deletable_branches else "")
    if row.pending or review:
        parts = ([f"{row.pending} decision(s) waiting"] if row.pending else []) + \
            ([f"{row.stale} older than the stale limit"] if row.stale else []) + \
            ([f"{len(review)} gitmem/* branch(es) to review"] if review else []) + ([done] if done else [])
        return WAITING, "; ".join(parts)
    if last is None:
        return NEW, "; ".join(["no cycle in LOG yet", *([done] if done else [])])
    if limit is None:
        return OK, "; ".join(["no schedule found in .github/workflows and no stall_after: stalls are not judged",
                              *([done] if done else [])])
    if days is None:
        return OK, "; ".join(["only sessions' entries in LOG: stalls are judged from the runner's first cycle",
                              *([done] if done else [])])
    return OK, done


def answer_at(entry: AgentEntry, path: str, line: int, branch: str) -> str:
    """Where the human answers a decision: the file on GitHub at its line, or path:line in the repository."""
    if entry.is_url:
        found = github_path(entry.repo)
        if found is not None:
            server = (os.environ.get("GITHUB_SERVER_URL") or "https://github.com").rstrip("/")
            return f"{server}/{found}/blob/{quote(branch)}/{quote(path)}#L{line}"
        return f"{path}:{line}"
    return f"{os.path.join(entry.repo, path)}:{line}"
