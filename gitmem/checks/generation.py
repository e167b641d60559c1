"""Which rules a commit was made under, so that `verify` holds each commit to the rules of its time.

A release that adds rules bumps `gitmem.codes.RULES_VERSION`. A commit is made under the newest generation named by
its gitmem.yaml (`rules_version`, which a new repository's template sets to the newest), by a `Gitmem-Rules: N`
trailer (every cycle and close commit carries one), or by any of its ancestors: once a repository has a commit
made under the new rules, everything after it is held to them, whoever commits, and lowering the key later
changes nothing. History from before the upgrade names no generation and is judged by the rules it was
written under (1), so a history that was valid stays valid. `check` always judges the change being made
with every rule.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache

from gitmem import codes, gitio
from gitmem.checks.violation import Violation

TRAILER = "Gitmem-Rules"


@cache
def _trailer_re() -> re.Pattern[str]:
    """Compiled on first use: a check of what is staged reads no commit message."""
    return re.compile(rf"^{TRAILER}: *([0-9]{{1,6}}) *$", re.M)


def trailer() -> str:
    """The trailer line gitmem's own commits carry."""
    return f"{TRAILER}: {codes.RULES_VERSION}"


def generation_named(message: str) -> int:
    """The generation a commit message names; 1 (the first rules) when it names none."""
    found = [int(value) for value in _trailer_re().findall(message)]
    return max(found, default=1)


class Generations:
    """The rules generation of commits, each computed once: the newest named by the commit or an ancestor.

    `verify` walks a range oldest first, so a commit's parents are usually known; a parent outside the range
    is found by following first parents back until a commit names the newest generation (or history ends).
    """

    def __init__(self, repo: gitio.Repo) -> None:
        self.repo = repo
        self._known: dict[str, int] = {}

    def of(self, commit: gitio.Commit, configured: int = 1) -> int:
        """The commit's generation; `configured` is its gitmem.yaml's `rules_version`."""
        if commit.id not in self._known:
            found = max([configured, generation_named(commit.message), *(self._parent(p) for p in commit.parents)])
            self._known[commit.id] = found
        return self._known[commit.id]

    def _parent(self, commit_id: str) -> int:
        if commit_id in self._known:
            return self._known[commit_id]
        chain, best = [], 1
        current: str | None = commit_id
        while current is not None and current not in self._known and best < codes.RULES_VERSION:
            commit = gitio.commit(self.repo, current)
            chain.append(current)
            best = max(best, generation_named(commit.message))
            current = commit.parents[0] if commit.parents else None
        if current is not None and current in self._known:
            best = max(best, self._known[current])
        for seen in chain:             # an upper bound for the commits walked is enough: cache the answer once
            self._known.setdefault(seen, best)
        return best


def judged(violations: Iterable[Violation], generation: int) -> list[Violation]:
    """The violations a commit made under `generation` answers for: rules added later judge later commits."""
    return [v for v in violations if v.generation <= generation]
