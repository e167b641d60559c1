"""The GM rules over an old and a new snapshot of memory. No git here: snapshots come from `gitmem.gitio`."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from gitmem import codes
from gitmem.checks.violation import Violation
from gitmem.config import Config
from gitmem.gitio import Snapshot


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


# Each rule family's module and the roles whose change can affect it (RULES provenance reads LESSONS).
FAMILIES = (("now_checks", ("now",)), ("decisions_checks", ("decisions",)), ("log_checks", ("log",)),
            ("lessons_checks", ("lessons",)), ("rules_checks", ("rules", "lessons")),
            ("cycle_numbers", ("now", "log")))


def run_checks(inp: CheckInput) -> list[Violation]:
    import importlib

    from gitmem.checks import every_memory_file
    from gitmem.gitio import same_blob

    found: list[Violation] = []
    found += every_memory_file.check(inp)
    if inp.config.workspaces:
        from gitmem.checks import cross_workspace

        found += cross_workspace.check(inp)
    broken = {v.path for v in found if v.code in (codes.NOT_UTF8.code, codes.NOT_A_REGULAR_FILE.code)}
    for name, roles in FAMILIES:
        # A family whose files are the same blobs as before has nothing to say: don't even import it.
        # This is the one place unchanged files are skipped; the families assume their input changed.
        if all(same_blob(inp.old, inp.new, inp.config.path(role)) for role in roles):
            continue
        family = importlib.import_module(f"gitmem.checks.{name}")
        found += family.check(inp, skip=broken)
    # What the next cycle's context will hold: GM104, GM209, GM307, GM509, GM601, GM602.
    from gitmem.checks import sizes

    found += sizes.check(inp, broken)
    if inp.remapped:
        from gitmem.checks import remap

        found += remap.check(inp, found)
    return sorted({_scrubbed(v) for v in found})


MAX_MESSAGE = 300


def _scrubbed(violation: Violation) -> Violation:
    """Messages may quote a bad line: a secret on it must not reach the output, nor a 1 MB heading whole."""
    from dataclasses import replace

    from gitmem.secrets import scrub

    # Cut long text before masking (the scan is per character) but not so tight that a secret is cut in half.
    message, hint = (_shorten(scrub(text[: 3 * MAX_MESSAGE])) for text in (violation.message, violation.hint))
    if (message, hint) == (violation.message, violation.hint):
        return violation
    return replace(violation, message=message, hint=hint)


def _shorten(text: str) -> str:
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 1] + "…"


def has_errors(violations: list[Violation]) -> bool:
    return any(v.is_error for v in violations)
