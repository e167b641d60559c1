"""What the checks read (`CheckInput`) and the one shape of a rule family (`RuleFamily`): in a module of its own,
so the rule families below the package's entry point (`gitmem.checks.run_checks`) import them without importing
the package that imports them."""
from __future__ import annotations

from collections.abc import Callable, Collection
from datetime import datetime
from typing import Protocol

from gitmem import codes
from gitmem.checks.violation import Violation
from gitmem.config import Config
from gitmem.gitio import Snapshot
from gitmem.records import record


@record(frozen=True)
class CheckInput:
    """What the checks read: the config, the state before (if any) and after, and who makes it."""
    config: Config
    old: Snapshot | None          # None: no previous state (unborn HEAD), every file is new
    new: Snapshot
    author_email: str | None = None   # who makes the new state; GM207 compares it with agent.email
    # The old side's own config (its files are read under the new config's names: a remap compares role with
    # role); None when it is the same config.
    old_config: Config | None = None
    remapped: tuple[tuple[str, str, str], ...] = ()     # (role, old path, new path) the config moved
    others: tuple[Snapshot, ...] = ()    # a merge's other parents, under the new config's names
    # Why the commit that makes the new state is not signed by a key in the old side's trust.signing_keys ("" when
    # it is), asked only when an answer needs it (`trust.signed_answers`); None when there is no commit yet.
    unsigned: Callable[[], str] | None = None
    # When the new state is written down: the clock for `check`, the commit's committer date for `verify`. An
    # answer new in it may not be dated later (GM211); None judges no time.
    moment: datetime | None = None
    moment_is_commit: bool = False      # whether `moment` is a committer date (verify) rather than the clock
    # The clock of the judging itself, when `moment` is a committer date: a clock that ran fast wrote the entry
    # and committed it, so only the clock that verifies now sees it ahead (GM309). None: `moment` is the clock.
    verifying: datetime | None = None
    # The rules generation the new state answers to (gitmem.checks.generation): the newest for `check` and for
    # the writers, the commit's own for `verify`. Additions are filtered afterwards (`generation.judged`); a rule
    # that a later generation relaxes reads it here (LOG and NOW order: GM302 and GM103 until rules 4, GM310 after).
    generation: int = codes.RULES_VERSION


class RuleFamily(Protocol):
    """A module of rules (`now_checks`, `every_memory_file`, `sizes`, `remap`, ...): `check` judges `inp` knowing what
    the checks before it found (`earlier`, empty when it runs alone). A file they found unreadable (`unreadable`)
    is judged no further."""

    def check(self, inp: CheckInput, earlier: Collection[Violation] = ()) -> list[Violation]: ...


# The codes that say a file cannot be read as text at all: the families judge nothing else in it.
UNREADABLE = (codes.NOT_UTF8.code, codes.NOT_A_REGULAR_FILE.code)


def unreadable(found: Collection[Violation]) -> set[str]:
    """The paths `found` says cannot be read as text (not UTF-8, not a regular file)."""
    return {v.path for v in found if v.code in UNREADABLE}
