"""What recall indexes: one document per memory entry or commit, with its kind, ID, time and place.

Parsing reuses gitmem.memory, so recall sees exactly the entries the checks see. Malformed entries
that the parsers skip are skipped here too; `gitmem check` reports them.
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, tzinfo

from gitmem.memory import decisions, lessons, log, now, rules
from gitmem.memory.markdown import plain_text
from gitmem.memory.timestamps import Timestamp

KINDS = ("log", "lesson", "decision", "now", "rule", "commit")


@dataclass(frozen=True)
class Doc:
    kind: str                 # one of KINDS
    ident: str                # "cycle 12", "close", "D-0003", "L-0007", "R-04", a short commit id
    title: str                # searchable with a higher weight than the body
    body: str
    path: str                 # repo-relative file, or the short commit id for commits
    line: int                 # 1-based first line; commits use 1
    end: int
    ts: float | None = None   # seconds since the epoch; None when the entry carries no date
    date: str = ""            # the date as written in the file

    @property
    def key(self) -> str:
        """Identity of the entry inside its file, used to keep unchanged entries when a file is re-read."""
        return f"{self.kind}:{self.ident}"

    @property
    def digest(self) -> str:
        text = "\x1f".join((self.kind, self.ident, self.title, self.body, self.date))
        return hashlib.sha1(text.encode("utf-8")).hexdigest()


def _stamp(when: Timestamp | None) -> tuple[float | None, str]:
    return (when.moment.timestamp(), str(when)) if when is not None else (None, "")


def _day(day: date | None) -> tuple[float | None, str]:
    if day is None:
        return None, ""
    return datetime.combine(day, time(12, 0), tzinfo=UTC).timestamp(), day.isoformat()


def _body(lines: Iterable[str]) -> str:
    """What is indexed: the entry's text without markdown (list markers, emphasis, link syntax)."""
    return plain_text("\n".join(lines))


def log_docs(text: str, path: str, *, first_line: int = 1, expect_title: bool = True) -> list[Doc]:
    """LOG entries; pass an appended tail with its `first_line` to parse only the new part. An amended entry
    gives way to its amendment (`log.live`), which is found by the heading it amends as well."""
    return entry_docs(log.live(log.parse(text, first_line=first_line, expect_title=expect_title).entries), path)


def entry_docs(entries: Iterable[log.LogEntry], path: str) -> list[Doc]:
    """LOG entries, as readers take them, as documents of `path`."""
    docs = []
    for entry in entries:
        ident = "close" if entry.cycle is None else f"cycle {entry.cycle}"
        title = ident if entry.cycle is None else f"{ident} {entry.outcome}"
        ts, label = _stamp(entry.when)
        docs.append(Doc("log", ident, title, _body(entry.body), path, entry.line, entry.end, ts, label))
    return docs


def now_docs(text: str, path: str) -> list[Doc]:
    docs = []
    for block in now.parse(text).blocks:
        ident = f"plan {block.plan_for.isoformat()}" if block.plan_for else f"cycle {block.cycle}"
        ts, label = _stamp(block.when)
        docs.append(Doc("now", ident, ident, _body(block.body), path, block.line, block.end, ts, label))
    return docs


def decision_docs(text: str, path: str) -> list[Doc]:
    """Pending and Resolved; a resolved decision is dated by its answer, a pending one by its question."""
    docs = []
    for item in decisions.parse(text).all:
        answered = item.answered
        ts, label = _stamp(answered[0] if answered else item.asked)
        state = decisions.RESOLVED if item.is_answered else decisions.PENDING     # answered in place: resolved
        title = f"{item.id} {item.title} {state.lower()}"
        docs.append(Doc("decision", item.id, title, _body(item.body), path, item.line, item.end, ts, label))
    return docs


def lesson_docs(text: str, path: str) -> list[Doc]:
    """A lesson is dated by its latest event: a confirmation makes it as fresh as the confirming cycle."""
    docs = []
    for item in lessons.parse(text).lessons:
        days = [event.day for _, event in item.confirmations if event is not None]
        if item.happened is not None:
            days.append(item.happened.day)
        ts, label = _day(max(days) if days else None)
        docs.append(Doc("lesson", item.id, f"{item.id} {item.title}", _body(item.body), path, item.line,
                        item.end, ts, label))
    return docs


def rule_docs(text: str, path: str) -> list[Doc]:
    """Proven rules carry no date: they are in force now. Retired ones are dated by their retirement."""
    docs = []
    for rule in rules.parse(text).all:
        day = None
        for word in rule.provenance.replace(":", " ").split():
            if len(word) == 10 and word[4] == "-" and word[7] == "-":
                try:
                    day = date.fromisoformat(word)
                except ValueError:
                    pass
        ts, label = _day(day) if rule.section == rules.RETIRED else (None, "")
        docs.append(Doc("rule", rule.id, f"{rule.id} {rule.section.lower()}",
                        f"{rule.text} ({rule.provenance})", path, rule.line, rule.line, ts, label))
    return docs


PARSERS = {"now": now_docs, "decisions": decision_docs, "lessons": lesson_docs, "rules": rule_docs}


def commit_doc(commit_id: str, when: int, author: str, message: str, zone: tzinfo) -> Doc:
    short = commit_id[:10]
    subject, _, rest = message.strip().partition("\n")
    label = str(Timestamp.from_datetime(datetime.fromtimestamp(when, zone)))
    return Doc("commit", short, subject.strip(), f"{rest.strip()}\n{author}".strip(), short, 1,
               1 + message.strip().count("\n"), float(when), label)


def iter_docs(role: str, text: str, path: str) -> Iterator[Doc]:
    parser = log_docs if role == "log" else PARSERS[role]
    yield from parser(text, path)
