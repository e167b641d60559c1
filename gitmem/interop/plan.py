"""What a batch of facts changes: which are new, which supersede an earlier import, which are already there.

A fact is known by its key (source, file, text: gitmem.interop.facts). One whose key an earlier import wrote adds
nothing. One whose key is new, from a file an earlier import read, and whose earlier fact has left the source, is
that fact edited: it supersedes it (matched by the name the source gives it, else by the words they share),
rather than standing beside it as a duplicate. A fact exported from a gitmem repository names its entry there
(`[gitmem: L-0003]`) and is that entry, not a new fact.
"""
from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from gitmem.interop.facts import LESSON, Fact, Origin, normalized, parse_origin
from gitmem.memory import decisions, lessons

ORIGIN_FIELD = "Origin"          # a lesson's field naming where an imported lesson came from
REPLACES_FIELD = "Replaces"      # an imported lesson's field naming the earlier import it supersedes
HOW_PREFIX = "How to apply: "    # the line an imported correction's how-to adds to its lesson's Change
# One proposal of an import's decision: `P2: text (origin: …)`, and ` — replaces D-0004 P1` when it supersedes.
PROPOSAL_RE = re.compile(r"^(P[0-9]+): (.*) \(origin: (.*?)\)"
                         r"(?: — replaces ((?:D-[0-9]{4,18} P[0-9]+)|L-[0-9]{4,18}))?$")
# How many of their words two texts must share to be one fact edited (of the words of both).
SAME_FACT = 0.5
_WORD_RE = re.compile(r"\w+")


@dataclass(frozen=True)
class Known:
    """A fact an earlier import wrote: `where` is its lesson (`L-0003`) or its proposal (`D-0004 P2`)."""

    origin: Origin
    where: str
    text: str
    replaced: bool          # out of force: a later import superseded it, or the human retired it
    open_lesson: bool = False   # an open lesson, which a superseding import retires (a promoted one stays)
    superseded: bool = False    # a later import named it replaced (not a lesson the human retired)


@dataclass(frozen=True)
class ImportStep:
    fact: Fact
    supersedes: Known | None = None


@dataclass(frozen=True)
class Skipped:
    fact: Fact
    reason: str


@dataclass(frozen=True)
class ImportPlan:
    steps: tuple[ImportStep, ...]
    skipped: tuple[Skipped, ...]

    @property
    def lessons(self) -> list[ImportStep]:
        return [step for step in self.steps if step.fact.kind == LESSON]

    @property
    def proposals(self) -> list[ImportStep]:
        return [step for step in self.steps if step.fact.kind != LESSON]


def known(lessons_text: str, decisions_text: str) -> list[Known]:
    """Every imported fact the memory holds: lessons with an Origin, and the proposals of import decisions."""
    found: list[Known] = []
    replaced: set[str] = set()
    for lesson in lessons.parse(lessons_text).lessons:
        origin = parse_origin(lesson.get(ORIGIN_FIELD) or "")
        if origin is not None:
            # The fact's text is the Change field before the `How to apply:` line the import adds to it.
            text = (lesson.get("Change") or "").split(f"\n{HOW_PREFIX}", 1)[0]
            found.append(Known(origin, lesson.id, text, lesson.status.startswith("retired"), lesson.is_open))
        if (earlier := (lesson.get(REPLACES_FIELD) or "").split(" ", 1)[0]):
            replaced.add(earlier)
    doc = decisions.parse(decisions_text)
    for decision in (*doc.pending, *doc.resolved):
        for line in (decision.get("Context") or "").split("\n"):
            match = PROPOSAL_RE.match(line.strip())
            origin = parse_origin(match.group(3)) if match else None
            if match is None or origin is None:
                continue
            found.append(Known(origin, f"{decision.id} {match.group(1)}", match.group(2), False))
            if match.group(4):
                replaced.add(match.group(4))
    return [Known(k.origin, k.where, k.text, k.replaced or k.where in replaced, k.open_lesson, k.where in replaced)
            for k in found]


def _words(text: str) -> set[str]:
    return set(_WORD_RE.findall(text.lower()))


def _likeness(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


class _Edits:
    """The known facts that have left the source (`left`), each of which an imported fact of the same source and
    file may be an edit of: the one its name (anchor) names, else the most alike of those with none, at least
    SAME_FACT alike (the first of equals).

    Alike facts are found through the words they share, not by comparing each with every one of its file (a
    Codex memory rewritten whole is thousands of each): two word sets at least SAME_FACT alike share a word among
    the first `len - ceil(SAME_FACT * len) + 1` of each, both in one order of all words, the rarest first (the
    prefix filter of set-similarity joins). Only those words are indexed and looked up."""

    def __init__(self, left: list[Known]) -> None:
        self.left = left
        self.taken: set[int] = set()
        self.words = [_words(k.text) for k in left]
        self.files: dict[tuple[str, str], list[int]] = {}
        for at, k in enumerate(left):
            self.files.setdefault((k.origin.source, k.origin.file), []).append(at)
        self.often: dict[str, int] = {}
        self.postings: dict[str, list[int]] = {}
        for at, k in enumerate(left):
            if k.origin.anchor is None:
                for word in self.words[at]:
                    self.often[word] = self.often.get(word, 0) + 1
        for at, k in enumerate(left):
            if k.origin.anchor is None:
                for word in self._prefix(self.words[at]):
                    self.postings.setdefault(word, []).append(at)

    def _prefix(self, words: set[str]) -> list[str]:
        rarest = sorted(words, key=lambda word: (self.often.get(word, 0), word))
        return rarest[:len(words) - math.ceil(SAME_FACT * len(words)) + 1]

    def take(self, fact: Fact) -> Known | None:
        """The known fact `fact` is an edit of, no longer a candidate for another; None when there is none."""
        origin = fact.origin          # the file and name as the origin holds them, which `left` was read from
        file = (fact.source, origin.file)
        if origin.anchor is not None:
            found = next((at for at in self.files.get(file, ()) if at not in self.taken
                          and self.left[at].origin.anchor == origin.anchor), None)
        else:
            words = _words(fact.text)
            near = {at for word in self._prefix(words) for at in self.postings.get(word, ())}
            scored = [(_likeness(words, self.words[at]), at) for at in sorted(near)
                      if at not in self.taken and (self.left[at].origin.source, self.left[at].origin.file) == file]
            best = max(scored, key=lambda pair: pair[0], default=None)
            found = best[1] if best is not None and best[0] >= SAME_FACT else None
        if found is None:
            return None
        self.taken.add(found)
        return self.left[found]


def entries(lessons_text: str, decisions_text: str, rules_text: str) -> set[str]:
    """The IDs of the repository's entries an export can name (and NOW): an exported fact that names one of them
    is that entry; one that names an entry this repository does not have is imported like any other."""
    from gitmem.memory import rules

    doc = decisions.parse(decisions_text)
    return {"NOW", *(lesson.id for lesson in lessons.parse(lessons_text).lessons),
            *(item.id for item in (*doc.pending, *doc.resolved)), *(rule.id for rule in rules.parse(rules_text).all)}


def plan_import(facts: Sequence[Fact], memory: Sequence[Known], present: set[str]) -> ImportPlan:
    # A key only superseded texts hold is a fact edited back to an earlier text: an edit like any other, which
    # supersedes the text in force. A key the human retired stays out.
    by_key = {k.origin.key: k for k in memory if not k.superseded}
    # The same text from another file of the source (Codex's MEMORY.md repeats its raw memories; a bullet in both
    # GEMINI.md files) is the same fact: it lands once.
    by_text = {(k.origin.source, normalized(k.text)): k for k in memory if not k.superseded}
    in_source = {fact.key for fact in facts}
    left = _Edits([k for k in memory if k.origin.key not in in_source and not k.replaced])
    steps: list[ImportStep] = []
    skipped: list[Skipped] = []
    seen: set[str] = set()
    seen_text: set[tuple[str, str]] = set()
    for fact in facts:
        if (entry := fact.exported_from) is not None and entry in present:
            skipped.append(Skipped(fact, f"exported from this repository's {entry}, which is the record"))
        elif fact.key in by_key:
            skipped.append(Skipped(fact, f"already imported ({by_key[fact.key].where})"))
        elif fact.key in seen:
            skipped.append(Skipped(fact, "the same fact again in this file"))
        elif not normalized(fact.text):
            skipped.append(Skipped(fact, "empty"))
        elif (same := by_text.get((fact.source, normalized(fact.text)))) is not None:
            skipped.append(Skipped(fact, f"the same text is already imported ({same.where})"))
        elif (fact.source, normalized(fact.text)) in seen_text:
            skipped.append(Skipped(fact, "the same text again, from another file of this import"))
        else:
            steps.append(ImportStep(fact, left.take(fact)))
            seen_text.add((fact.source, normalized(fact.text)))
        seen.add(fact.key)
    return ImportPlan(tuple(steps), tuple(skipped))
