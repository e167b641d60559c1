"""The verdicts on Confirmed lines that history gave, kept for the next close: a line is judged again only when
what its verdict depends on changed.

A verdict (gitmem.close.backing) is a function of the commit that added the line (its trees and its parents'),
the line, the lesson as it reads now (its Happened cycle, and its title and PROMOTED_FIELDS against the commit's),
and LOG as it reads now, which the judging takes as the longer copy of every older LOG (append-only). Commits do
not change, so a kept verdict is the one judging would give again while
  - the lesson's content (id, title, body) is the same: its digest is kept with the verdict;
  - the commit is in history: the HEAD the verdicts were kept at is an ancestor of this HEAD (one check);
  - LOG is the LOG they were judged on, grown at its end: the SHA-1 of its first N bytes is kept with them
    (one hash over LOG, at C speed, where judging reads blobs per commit). A seal (rules 6) moves LOG.md's oldest
    entries into a volume and changes none of LOG's history: the ids of the volumes HEAD held are kept too, and
    while they still lead HEAD's volumes, the volumes sealed since are put back before LOG.md
    (`volumes.unseal`: the LOG.md they were cut from) and that text is the one proven; so a seal, every 200
    cycles, leaves the verdicts standing, and reads only the volumes it added;
  - the cache of `.git/gitmem` still names that commit for the line: given the same state, the judging would
    judge from that commit (gitmem.close.backing), so the verdict is the one it would reach.
A line whose lesson changed since (a confirmation added, a field edited) is judged as before, and the close costs
what changed, not the number of lessons (3,000 at 100x, a verdict each judged on every close).

The gates' outcome of each lesson (gitmem.close.gates: which confirmations count, why it is not eligible, the
lines that do not count) is kept beside its lines' verdicts, by the digest of the lesson's content. It is a
function of that content and of those verdicts alone, so it holds while each of them would be taken from the memo:
the memo holds, and the cache names for each line the commit its verdict was judged from. It is kept only while
every line's verdict is kept with the same commit and digest, so the close reads an unchanged lesson's gate with
no field of it parsed (1,333 lessons with 3,119 lines at 100x, most of them eligible and waiting for room in RULES).

The gates are code that changes with gitmem: a gate kept by another version of them (`gates_version`) is judged
again, so an upgrade neither promotes a lesson on an old "eligible" nor holds one back on an old "not eligible".
The memo is outside `.git/gitmem`, yet with the sandbox off the agent, the same user, may still write it: a kept
gate holds a lesson back or lets it wait, and a lesson is promoted only on a gate judged in this process
(gitmem.close.promotion). That judgement reads the lines' verdicts from this memo too, trusted as the memo is
(below): a gate judged again stops a planted outcome, not a planted verdict beside it.

The verdicts are kept where the agent cannot write them (gitmem.workspace.proofs: outside the repository), never in
`.git/gitmem`: there a planted verdict would promote a lesson history does not back. Only this process's own
judgements are added; a verdict read from the memo stays only while the memo holds.

Each verdict is one string, `<commit> <digest> <1|0> <why>`, read when its line is asked about: a close reads
the memo of every line (3,000 at 100x) and asks about few, so the memo is a few JSON nodes to load and check for
depth, not five per line, and a line's string is taken apart and checked only when it is used. A string of
another shape is no verdict (its line is judged again), and is not written back.
"""
from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitmem.workspace import proofs

if TYPE_CHECKING:
    from gitmem.workspace.log_history import Volume

KIND = "close-verdicts"
MAX_BYTES = 64 << 20        # a memo larger than any history gives (~200 bytes a line) proves nothing
_SHA1_HEX = re.compile(r"[0-9a-f]{40}")

# A kept verdict: (the commit that added the line, the digest of its lesson's content, whether it counts, why not).
Kept = tuple[str, str, bool, str]
# A kept gate: (the cycles that count, why the lesson is not eligible or None, the lines that do not count).
KeptGate = tuple[tuple[int, ...], str | None, tuple[str, ...]]


@functools.cache
def gates_version() -> str:
    """The version of the gating rules a kept gate was judged by: the SHA-1 of gitmem's version and of the source of
    gitmem.close.gates, read once a process (a file of a few kilobytes, hashed in microseconds, where the close
    reads the memo's megabytes). Derived, so no one has to remember to bump it when `gates.gate` changes; an
    install without that source (bytecode only) falls back to gitmem's version alone."""
    from gitmem import __version__

    try:
        source = Path(__file__).with_name("gates.py").read_bytes()
    except OSError:
        source = b""
    return hashlib.sha1(__version__.encode() + b"\0" + source).hexdigest()


def content_digest(content: str) -> str:
    """The digest a kept verdict names its lesson's content by (`IdEntry.content`)."""
    return hashlib.sha1(content.encode("utf-8", "surrogatepass")).hexdigest()


def kind_of(paths: tuple[str, str]) -> str:
    """The proofs kind (gitmem.workspace.proofs) of the verdicts on these memory files: one memo per workspace of
    a work tree (`workspaces:`), so that the closes of two workspaces do not overwrite each other's."""
    return f"{KIND}/{hashlib.sha1(chr(0).join(paths).encode('utf-8', 'surrogatepass')).hexdigest()[:16]}"


class VerdictMemo:
    """The kept verdicts of one work tree, for the memory files at `paths` (LESSONS, LOG)."""

    def __init__(self, root: Path, paths: tuple[str, str]) -> None:
        self.root = root
        self.paths = list(paths)
        self.kind = kind_of(paths)
        read = _read(proofs.read_proofs(root, self.kind, max_bytes=MAX_BYTES), self.paths)
        self._valid_at: str | None = read[0] if read is not None else None
        self._log_proof: tuple[int, str] = read[1] if read is not None else (0, "")
        self._kept: dict[str, object] = read[2] if read is not None else {}      # read when asked (`_entry`)
        self._sealed: list[str] | None = read[3] if read is not None else None   # None: a memo from before
        self._gates: dict[str, object] = read[4] if read is not None else {}     # read when asked (`_gate_entry`)
        self._volumes: tuple[Volume, ...] | None = None
        self._holds: bool | None = None
        self._log_hash: Any = None          # SHA-1 over the LOG judged on, as far as it was hashed
        self._hashed = 0
        self._fresh: dict[str, Kept] = {}
        self._fresh_gates: dict[str, object] = {}

    def find(self, key: str, digest: str, commit: object, *, in_history: Callable[[str], bool],
             log: Callable[[], bytes]) -> Kept | None:
        """The kept verdict of the line `key` of a lesson whose content has `digest`, when `.git/gitmem`'s cache
        names `commit` for it and the memo holds at this HEAD and LOG; else None (judge it)."""
        entry = _entry(self._kept.get(key))
        if entry is None or entry[1] != digest or entry[0] != commit or not self._proven(in_history, log):
            return None
        return entry

    def keep(self, key: str, digest: str, commit: str, ok: bool, why: str) -> None:
        """A verdict this process judged from history."""
        self._fresh[key] = (commit, digest, ok, why)

    def find_gate(self, digest: str, needed: int, names: Callable[[str], object], *,
                  in_history: Callable[[str], bool], log: Callable[[], bytes]) -> KeptGate | None:
        """The kept gate of a lesson whose content has `digest`, judged needing `needed` confirmations, when the
        cache (`names`: the commit it names for a line) names for each of its lines the commit its verdict was
        judged from, and the memo holds at this HEAD and LOG; else None (judge it)."""
        entry = _gate_entry(self._gates.get(digest))
        if entry is None or entry[0] != needed:
            return None
        kept = self._kept
        if not all(names(key) == commit and _kept_as(kept.get(key), commit, digest) for key, commit in entry[1]):
            return None
        return entry[2] if self._proven(in_history, log) else None

    def keep_gate(self, digest: str, needed: int, lines: list[tuple[str, str]], gate: KeptGate) -> None:
        """A gate this process judged, from the verdicts of `lines` (each line's key and the commit that added it)."""
        cycles, why, unbacked = gate
        if any("\n" in text for text in (why or "", *unbacked)):
            return                      # not in the form `_gate_entry` reads: judged again next time
        counted = ",".join(map(str, cycles)) or "-"
        judged = ",".join(f"{key}:{commit}" for key, commit in lines) or "-"
        self._fresh_gates[digest] = "\n".join([f"{needed} {counted} {judged}", why or "", *unbacked])

    def save(self, head: str, *, in_history: Callable[[str], bool], log: Callable[[], bytes]) -> None:
        """Keep this process's verdicts and gates with those still holding, as of `head` and LOG as read. Nothing is
        written when nothing was judged: the memo holds for the next process as it stands."""
        if not (self._fresh or self._fresh_gates) or not is_commit_id(head):
            return
        proven = self._proven(in_history, log)
        kept = {key: value for key, value in self._kept.items()
                if key not in self._fresh and _entry(value) is not None} if proven else {}
        verdicts = {**kept, **{key: _written(entry) for key, entry in self._fresh.items()}}
        gates = {digest: value for digest, value in
                 [*((self._gates.items()) if proven else ()), *self._fresh_gates.items()]
                 if _backed_gate(digest, value, verdicts)}
        data = log()
        if self._log_hash is None or self._hashed > len(data):
            self._log_hash, self._hashed = hashlib.sha1(), 0
        self._log_hash.update(memoryview(data)[self._hashed:])
        self._hashed = len(data)        # a second save (the gates after the verdicts) hashes nothing twice
        proofs.keep_proofs(self.root, self.kind, {
            "valid_at": head, "paths": self.paths, "log": [len(data), self._log_hash.hexdigest()],
            "volumes": [volume.blob for volume in self._held()], "verdicts": verdicts, "gates": gates,
            "gates_version": gates_version()})

    def _proven(self, in_history: Callable[[str], bool], log: Callable[[], bytes]) -> bool:
        """Whether the kept verdicts hold now: judged at an ancestor of HEAD, on a LOG that is this one's start
        once the volumes sealed since are put back before it."""
        if self._holds is None:
            self._holds = bool(self._valid_at is not None and in_history(self._valid_at) and self._log_grew(log))
        return self._holds

    def _log_grew(self, log: Callable[[], bytes]) -> bool:
        data = log()
        since = self._sealed_since()
        if since is None:
            return False
        if since:
            unsealed = self._unsealed(data, since)
            if unsealed is None:
                return False
            data = unsealed
        size, digest = self._log_proof
        if size > len(data):
            return False
        hashed = hashlib.sha1(memoryview(data)[:size])
        if not since:           # the LOG.md `save` hashes on, as far as it is hashed already
            self._log_hash, self._hashed = hashed, size
        return hashed.hexdigest() == digest

    def _held(self) -> tuple[Volume, ...]:
        """The volumes of LOG that HEAD holds, by number (none outside git)."""
        if self._volumes is None:
            from gitmem import gitio
            from gitmem.workspace.log_history import tracked

            try:
                self._volumes = tracked(gitio.open_repo(self.root), self.paths[1])
            except gitio.RepoError:
                self._volumes = ()
        return self._volumes

    def _sealed_since(self) -> list[Volume] | None:
        """The volumes HEAD holds that the memo's LOG did not (sealed since); None when the memo's volumes are not
        the first of HEAD's (history other than the one judged on). A memo that names none (written before rules
        6 kept them) is proven on LOG.md alone, as it was written."""
        held = self._held()
        if self._sealed is None:
            return []
        if [volume.blob for volume in held[:len(self._sealed)]] != self._sealed:
            return None
        return list(held[len(self._sealed):])

    def _unsealed(self, live: bytes, since: list[Volume]) -> bytes | None:
        """LOG.md with the volumes `since` put back before it: the LOG they were sealed from, grown since."""
        from gitmem import gitio
        from gitmem.memory import volumes

        try:
            repo = gitio.open_repo(self.root)
            return volumes.unseal(live, self.paths[1], [(volume.number, gitio.blob(repo, volume.blob))
                                                        for volume in since])
        except (gitio.RepoError, KeyError, ValueError):
            return None


def is_commit_id(value: object) -> bool:
    """A full commit id (or a SHA-1 digest), never a revision (`HEAD~2`, a branch name) that would be resolved."""
    return isinstance(value, str) and _SHA1_HEX.fullmatch(value) is not None


def _read(found: dict[str, Any], paths: list[str]) -> tuple[str, tuple[int, str], dict[str, object],
                                                            list[str] | None, dict[str, object]] | None:
    """(the HEAD they were kept at, the LOG proof, the verdicts as written, the volumes' ids then or None, the gates
    as written when judged by these gating rules, `gates_version`) of a memo for these `paths`; None when it is not
    one gitmem wrote. Each verdict is checked when its line is asked about (`_entry`), each gate when its lesson is
    (`_gate_entry`)."""
    valid_at, log_proof, verdicts = found.get("valid_at"), found.get("log"), found.get("verdicts")
    sealed = found.get("volumes")
    gates = found.get("gates")
    if not (found.get("paths") == paths and is_commit_id(valid_at) and isinstance(verdicts, dict)
            and isinstance(log_proof, list) and len(log_proof) == 2 and type(log_proof[0]) is int
            and log_proof[0] >= 0 and is_commit_id(log_proof[1])
            and (sealed is None or isinstance(sealed, list) and all(is_commit_id(blob) for blob in sealed))):
        return None
    if not isinstance(gates, dict) or found.get("gates_version") != gates_version():
        gates = {}              # judged by other gating rules, or none: each lesson is judged again
    return str(valid_at), (log_proof[0], str(log_proof[1])), verdicts, sealed, gates


_OK = {"1": True, "0": False}


def _entry(value: object) -> Kept | None:
    """A kept verdict as `_written` wrote it; None for anything else (its line is judged again)."""
    if not isinstance(value, str):
        return None
    parts = value.split(" ", 3)
    if len(parts) != 4 or parts[2] not in _OK or not (is_commit_id(parts[0]) and is_commit_id(parts[1])):
        return None
    return parts[0], parts[1], _OK[parts[2]], parts[3]


def _written(entry: Kept) -> str:
    """How a verdict is kept: one string (see the module's docstring)."""
    commit, digest, ok, why = entry
    return f"{commit} {digest} {'1' if ok else '0'} {why}"


def _gate_entry(value: object) -> tuple[int, list[tuple[str, str]], KeptGate] | None:
    """A kept gate as `keep_gate` wrote it: (needed, its lines' keys and commits, the gate); None for anything else
    (its lesson is judged again). One string, as a verdict is, read when its lesson is asked about: a line
    `<needed> <cycles that count, by commas, or -> <key:commit of each line, by commas, or ->`, a line with why the
    lesson is not eligible (empty when it is), then one line for each line that does not count."""
    if not isinstance(value, str):
        return None
    first, why, *unbacked = value.split("\n") if "\n" in value else (value, "")
    head = first.split(" ")
    if len(head) != 3 or not head[0].isdecimal() or not _CYCLES.fullmatch(head[1]):
        return None
    lines: list[tuple[str, str]] = []
    if head[2] != "-":
        for line in head[2].split(","):
            key, _, commit = line.partition(":")
            if not (is_commit_id(key) and is_commit_id(commit)):
                return None
            lines.append((key, commit))
    cycles = tuple(int(cycle) for cycle in head[1].split(",")) if head[1] != "-" else ()
    return int(head[0]), lines, (cycles, why or None, tuple(unbacked))


_CYCLES = re.compile(r"-|[0-9]{1,18}(?:,[0-9]{1,18})*")


def _backed_gate(digest: str, value: object, verdicts: dict[str, object]) -> bool:
    """Whether a gate may be kept with these verdicts: each of its lines' is kept, judged from the same commit on
    the same lesson content (so the gate holds exactly while they do)."""
    entry = _gate_entry(value)
    if entry is None:
        return False
    return all(_kept_as(verdicts.get(key), commit, digest) for key, commit in entry[1])


def _kept_as(value: object, commit: str, digest: str) -> bool:
    """Whether `value` is a verdict as `_written` writes it, judged from `commit` on a lesson of `digest` (both
    well formed already): `_entry` would take it, with them, and no regex runs for it."""
    if not isinstance(value, str):
        return False
    start = len(commit) + len(digest) + 2
    return value.startswith(commit) and value.startswith(digest, len(commit) + 1) and \
        value[len(commit)] == " " and value[start - 1] == " " and value[start:start + 2] in ("1 ", "0 ")
