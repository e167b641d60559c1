"""A memory repository driven through time with an injected clock, the way the runner writes it.

`World` writes cycles as the runner does (library writes, then a commit by the agent identity) at chosen
moments; the close, status and promotion tests drive it. A lesson or confirmation written right after a cycle
belongs to that cycle: it records the cycle's number and is folded into the cycle's commit, as the runner commits
everything the agent wrote in one commit. That is what history-backed confirmations ask of a line.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime

from gitmem import gitio
from gitmem.checks.check_and_verify import check_worktree, verify_range
from gitmem.close import CloseResult, run_close
from gitmem.config import ROLES, load_config
from gitmem.memory import log
from gitmem.memory_writer import MemoryWriter
from gitmem.workspace import Workspace
from tests.support.helpers import AGENT, HUMAN, GitRepo

UTC = UTC
MEMORY = ("NOW.md", "DECISIONS.md", "LOG.md", "LESSONS.md", "RULES.md", "ROADMAP.md")


def at(day: int, hour: int, minute: int = 0) -> datetime:
    return datetime(2026, 11, day, hour, minute, tzinfo=UTC)


def d(day: int) -> date:
    return date(2026, 11, day)


@dataclass
class Clock:
    moment: datetime

    def __call__(self) -> datetime:
        return self.moment


class World:
    """One workspace's memory (`workspace`, default the repository's own) driven through time."""

    def __init__(self, repo: GitRepo, *, workspace: str | None = None) -> None:
        self.git = repo
        self.workspace = workspace
        self.clock = Clock(at(1, 8))
        self.reload()

    def reload(self) -> None:
        self.config = load_config(self.git.path, workspace=self.workspace)
        self.memory = MemoryWriter(Workspace.at(self.git.path, self.config), clock=self.clock, author_email=AGENT[1])

    def path(self, role: str) -> str:
        """The workspace's memory file of `role` (`log`, `lessons`...), repo-relative."""
        return self.config.path(role)

    def commit(self, message: str, *paths: str, author: tuple[str, str] = AGENT) -> None:
        self.git.stage(*(paths or [self.path(role) for role in ROLES]))
        self.git.commit(message, author=author)

    def cycle(self, when: datetime, outcome: str = "built", *, task: str | None = None, result: str | None = None,
              evidence: str | None = None) -> int:
        self.clock.moment = when
        entry = self.memory.add_log_entry(
            task=task or f"task at {when:%d %H:%M}", outcome=outcome, evidence=evidence,
            result=result or ("shipped it" if outcome != "no-build" else f"blocked at {when:%d %H:%M}"))
        self.memory.add_now_block(did=f"cycle {entry.cycle}", human="nothing", next="carry on")
        self.commit(f"gitmem: cycle {entry.cycle}", self.path("log"), self.path("now"))
        return entry.cycle  # type: ignore[return-value]

    def last_cycle(self) -> int:
        return log.last_cycle_number(self.read(self.path("log")))

    def lesson(self, when: datetime, title: str, *, rule: str | None = None, supersedes: str | None = None) -> str:
        """A lesson written during the last cycle, in that cycle's commit."""
        self.clock.moment = when
        item = self.memory.add_lesson(title=title, happened="it went wrong", why="a reason", change="a change",
                                      rule=rule, supersedes=supersedes, cycle=self.last_cycle())
        self.git.amend(self.path("lessons"))
        return item.id

    def confirm(self, when: datetime, lesson_id: str) -> None:
        """A confirmation written during the last cycle, in that cycle's commit."""
        self.clock.moment = when
        self.memory.confirm_lesson(lesson_id, evidence="it held again", cycle=self.last_cycle())
        self.git.amend(self.path("lessons"))

    def eligible_lessons(self, count: int, day: int = 10) -> list[str]:
        """`count` lessons with rules ("Rule number i."), written in a cycle at 08:00 on `day` and confirmed in
        the cycles at 09:00 and 10:00: each eligible for promotion by that day's close."""
        self.cycle(at(day, 8))
        ids = [self.lesson(at(day, 8, 10 + i), f"Lesson {i}", rule=f"Rule number {i}.") for i in range(count)]
        for hour in (9, 10):
            self.cycle(at(day, hour))
            for i, lesson in enumerate(ids):
                self.confirm(at(day, hour, 10 + i), lesson)
        return ids

    def ask(self, when: datetime, title: str, recommendation: str = "do the simple thing") -> str:
        self.clock.moment = when
        item = self.memory.ask_decision(title=title, recommendation=recommendation)
        self.commit(f"ask {item.id}", self.path("decisions"))
        return item.id

    def answer(self, when: datetime, decision_id: str, answer: str = "yes") -> None:
        """The human answers, in a commit of their own."""
        self.clock.moment = when
        human = MemoryWriter(Workspace.at(self.git.path, self.config), clock=self.clock, author_email=HUMAN[1])
        human.answer_decision(decision_id, answer=answer, name=HUMAN[0], email=HUMAN[1])
        self.commit(f"answer {decision_id}", self.path("decisions"), author=HUMAN)

    def close(self, day: date, when: datetime, **kwargs: object) -> CloseResult:
        self.clock.moment = when
        self.reload()
        return run_close(Workspace.at(self.git.path, self.config), day=day, clock=self.clock, **kwargs)  # type: ignore[arg-type]

    def read(self, rel: str) -> str:
        return self.git.read(rel)

    def assert_valid(self, before: str) -> None:
        """What must hold after every close: check --worktree clean, the range verifies, nothing dirty."""
        ws = self.git.ws(self.config)
        assert [v for v in check_worktree(ws) if v.is_error] == []
        checked = verify_range(ws, before, "HEAD")
        assert checked.violations == [] and not checked.rewritten
        assert [p for p, _ in gitio.dirty_files(ws.repo) if p in MEMORY] == []


def last_entry(text: str) -> log.LogEntry:
    return log.tail(text, 1).entries[-1]


