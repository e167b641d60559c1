"""The GM rules over an old and a new snapshot of memory. No git here: snapshots come from `gitmem.gitio`."""
from __future__ import annotations

from typing import cast

from gitmem.checks.inputs import CheckInput, RuleFamily
from gitmem.checks.violation import Violation
from gitmem.memory.once import Recent

__all__ = ["CheckInput", "has_errors", "run_checks"]


# Each rule family's module and the roles whose change can affect it (RULES provenance reads LESSONS).
FAMILIES = (("now_checks", ("now",)), ("decisions_checks", ("decisions",)), ("log_checks", ("log",)),
            ("lessons_checks", ("lessons",)), ("rules_checks", ("rules", "lessons")),
            ("cycle_numbers", ("now", "log")), ("lesson_cycles", ("lessons", "log")))


# The families whose verdict is a function of the config and of their files' bytes on each side (and of whether
# a check before them found a file unreadable) alone. Each such verdict is kept for the last few inputs: a step
# that judges the same change again (the close judges its promotions as it writes them, then the whole change
# before its commit) takes it from there instead of judging 3,000 lessons again (100x).
_BY_BYTES = ("lessons_checks",)
# Keyed by the config's identity, as a process holds one (the value keeps that config alive, so its id is not
# reused while the verdict is kept).
_JUDGED: Recent[tuple[str, int, tuple[tuple[bytes | None, bytes | None], ...], frozenset[str]],
                tuple[object, list[Violation]]] = Recent(4)


def _judged_once(name: str, roles: tuple[str, ...], family: RuleFamily, inp: CheckInput,
                 early: tuple[Violation, ...]) -> list[Violation]:
    if name not in _BY_BYTES:
        return family.check(inp, early)
    from gitmem.checks.inputs import unreadable

    paths = [inp.config.path(role) for role in roles]
    sides = tuple((inp.old.read(path) if inp.old is not None else None, inp.new.read(path)) for path in paths)
    key = (name, id(inp.config), sides, frozenset(unreadable(early)) & frozenset(paths))
    known = _JUDGED.get(key)
    if known is None:
        known = (inp.config, family.check(inp, early))
        _JUDGED.put(key, known)
    return list(known[1])


def run_checks(inp: CheckInput) -> list[Violation]:
    import importlib

    from gitmem.checks import every_memory_file
    from gitmem.gitio import same_blob

    found: list[Violation] = []
    found += every_memory_file.check(inp)
    if inp.config.workspaces:
        from gitmem.checks import cross_workspace

        found += cross_workspace.check(inp, found)
    # Every family knows what the whole-repository checks found (a file that is not text is judged no further).
    early = tuple(found)
    for name, roles in FAMILIES:
        # A family whose files are the same blobs as before has nothing to say: don't even import it.
        # This is the one place unchanged files are skipped; the families assume their input changed.
        if all(same_blob(inp.old, inp.new, inp.config.path(role)) for role in roles):
            continue
        family = cast(RuleFamily, importlib.import_module(f"gitmem.checks.{name}"))
        found += _judged_once(name, roles, family, inp, early)
    # LOG's sealed volumes (rules 6) change in their own folder, LOG.md or not: judged every time, by listing.
    from gitmem.checks import volume_checks

    found += volume_checks.check(inp, early)
    # What the next cycle's context will hold: GM104, GM209, GM307, GM509, GM601, GM602.
    from gitmem.checks import sizes

    found += sizes.check(inp, early)
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
