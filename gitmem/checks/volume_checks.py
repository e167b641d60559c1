"""GM314, GM315 (rules 6): LOG's sealed volumes never change, and each volume added proves a seal.

A seal moves LOG.md's oldest entries, byte for byte, into the next volume (gitmem.memory.volumes). It is proven
from the change alone: the volumes added, in number order, hold exactly entries that opened the old LOG.md, and
the new LOG.md is an append to what the old one keeps (`proven_base`, which the LOG rules judge the new LOG.md
against). Volumes are listed, never trusted by name alone: one whose number skips is refused, so that no file
waits in the folder to become history when the numbers reach it.
"""
from __future__ import annotations

from collections.abc import Callable, Collection

from gitmem import codes
from gitmem.checks.inputs import CheckInput
from gitmem.checks.violation import Violation
from gitmem.confined import files
from gitmem.gitio import Snapshot
from gitmem.memory import log, volumes

SEALS_FROM = 6                      # the rules generation that seals LOG
_PROOF = "sealed-log-base"          # Snapshot.facts key: the LOG.md a proven seal leaves, or None
_UNSEALED = "unsealed-log"          # Snapshot.facts key: the history a seal that also appends writes, or None


Found = dict[int, tuple[str, str | None, int | None]]


def _volumes(snapshot: Snapshot | None, log_path: str, *, run: bool = True) -> Found | None:
    """number -> (path, blob id, mode) of the volumes `snapshot` holds (with `run=False`, of every file named like
    one: `volumes.named`); None when it cannot list folders."""
    if snapshot is None:
        return {}
    # Named once per snapshot: a seal's check asks four times of each side (270 volumes at 100x).
    key = ("volumes" if run else "volume-names", log_path)
    if key not in snapshot.facts:
        listing = snapshot.entries_in(volumes.volume_folder(log_path))
        found: Found | None = None
        if listing is not None:
            listed = volumes.numbered(log_path, listing) if run else volumes.named(log_path, listing)
            found = {number: (path, *listing[path]) for number, path in listed}
        snapshot.facts[key] = found
    return snapshot.facts[key]  # type: ignore[return-value]


def _same(inp: CheckInput, path: str, old_oid: str | None, new_oid: str | None) -> bool:
    if old_oid is not None and new_oid is not None:
        return old_oid == new_oid
    assert inp.old is not None
    data = inp.new.read(path)
    return data is not None and data == inp.old.read(path)


def check(inp: CheckInput, earlier: Collection[Violation] = ()) -> list[Violation]:
    if inp.generation < SEALS_FROM:
        return []
    log_path = inp.config.path("log")
    old, new = _volumes(inp.old, log_path), _volumes(inp.new, log_path, run=False)
    old_files = _volumes(inp.old, log_path, run=False)
    if old is None or new is None or old_files is None:
        return []
    found: list[Violation] = []
    for number, (path, old_oid, _) in sorted(old.items()):
        if number not in new:
            found.append(Violation.of(codes.LOG_VOLUME_CHANGED, path, 1, "removed", number=number, path=path))
        elif new[number][2] not in files.BLOB_MODES:
            found.append(Violation.of(codes.LOG_VOLUME_CHANGED, path, 1, "not_a_file", number=number, path=path))
        elif not _same(inp, path, old_oid, new[number][1]):
            found.append(Violation.of(codes.LOG_VOLUME_CHANGED, path, 1, number=number, path=path))
    # A file named like a volume that no seal wrote (past a gap) is no volume; one already there that the volumes
    # added would reach is taken in unread, so it is refused as a seal that does not hold what left LOG.md.
    added = sorted(number for number in new if number not in old
                   and (number not in old_files or _reached(old, new, number)))
    if not added:
        return found
    first = max(old, default=0) + 1
    stray = next((number for number in added if number in old_files), None)
    if stray is not None:
        return found + [Violation.of(codes.LOG_VOLUME_UNPROVEN, new[stray][0], 1, "stray", number=stray,
                                     path=new[stray][0])]
    skipped = [(number, first + index) for index, number in enumerate(added) if number != first + index]
    if skipped:
        number, expected = skipped[0]
        return found + [Violation.of(codes.LOG_VOLUME_UNPROVEN, new[number][0], 1, "number", number=number,
                                     next=expected)]
    old_log = inp.old.read(log_path) if inp.old is not None else None
    new_log = inp.new.read(log_path)
    where = new[added[0]][0]
    if old_log is not None and new_log is not None and new_log.startswith(old_log):
        return found + [Violation.of(codes.LOG_VOLUME_UNPROVEN, where, 1, "not_moved", number=added[0],
                                     log=log_path)]
    if proven_base(inp) is None and unsealed_new(inp) is None:
        return found + [Violation.of(codes.LOG_VOLUME_UNPROVEN, where, 1, "content", number=added[0],
                                     log=log_path)]
    return found


def _reached(old: Found, new: Found, number: int) -> bool:
    """Whether the volumes `new` adds to `old` run up to `number` (every number from old's next to it)."""
    return all(n in new for n in range(max(old, default=0) + 1, number))


def proven_base(inp: CheckInput) -> bytes | None:
    """The LOG.md that the volumes this change adds leave of the old one (its title, the entries they did not
    take, amendments renumbered), which the new LOG.md must append to; None when the change adds no volume
    or its volumes prove no seal (`check` says why)."""
    log_path = inp.config.path("log")

    def base() -> bytes | None:
        old_log = inp.old.read(log_path) if inp.old is not None else None
        added = _added(inp, log_path)
        return volumes.sealed_from(old_log, log_path, added) if added and old_log is not None else None

    return _for_this_old(inp, (_PROOF, log_path), base)


def _for_this_old(inp: CheckInput, key: tuple[str, str], found: Callable[[], bytes | None]) -> bytes | None:
    """`found()`, kept on the new side for this old side only (a merge is judged against each of its parents in
    turn): the LOG rules and the volume rules both ask, and each answer reads the whole history a seal moved."""
    known = inp.new.facts.get(key)
    if isinstance(known, tuple) and known[0] is inp.old:
        return known[1]  # type: ignore[no-any-return]
    answer = found()
    inp.new.facts[key] = (inp.old, answer)
    return answer


def _added(inp: CheckInput, log_path: str) -> list[tuple[int, bytes]]:
    """(number, whole file) of the volumes the change adds, in order; none when it adds none, or they do not
    continue the old side's volumes one by one."""
    old, new = _volumes(inp.old, log_path), _volumes(inp.new, log_path)
    if inp.generation < SEALS_FROM or old is None or new is None:
        return []
    added = [(number, inp.new.read(path)) for number, (path, _, _) in sorted(new.items()) if number not in old]
    first = max(old, default=0) + 1
    if [number for number, _ in added] != list(range(first, first + len(added))):
        return []
    return [(n, c) for n, c in added if c is not None] if all(c is not None for _, c in added) else []


def unsealed_new(inp: CheckInput) -> bytes | None:
    """The history a change writes when its volumes also hold entries it appends (a squash merge of a branch that
    sealed after more entries than the old LOG.md holds): the volumes it adds, unsealed, then its LOG.md; which
    the LOG rules judge as an append of the old LOG.md. None when the change is no such seal: the volumes must be
    what the seal rule cuts from that history at their boundaries (`volumes.sealed_from` gives LOG.md back)."""
    log_path = inp.config.path("log")

    def whole_history() -> bytes | None:
        old_log = inp.old.read(log_path) if inp.old is not None else None
        new_log = inp.new.read(log_path)
        added = _added(inp, log_path)
        if not added or old_log is None or new_log is None:
            return None
        whole = volumes.unseal(new_log, log_path, added)
        if whole is None or volumes.sealed_from(whole, log_path, added) != new_log:
            return None
        return whole if log.append_verdict(old_log, whole).ok else None

    return _for_this_old(inp, (_UNSEALED, log_path), whole_history)
