"""What the checks read (`CheckInput`): in a module of its own, so the rule families below the package's entry
point (`gitmem.checks.run_checks`) import it without importing the package that imports them."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from gitmem import codes
from gitmem.config import Config
from gitmem.gitio.snapshots import Snapshot


@dataclass(frozen=True)
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
