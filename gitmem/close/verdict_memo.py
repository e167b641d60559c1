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

The verdicts are kept where the agent cannot write them (gitmem.workspace.proofs: outside the repository), never in
`.git/gitmem`: there a planted verdict would promote a lesson history does not back. Only this process's own
judgements are added; a verdict read from the memo stays only while the memo holds.

Each verdict is one string, `<commit> <digest> <1|0> <why>`, read when its line is asked about: a close reads
the memo of every line (3,000 at 100x) and asks about few, so the memo is a few JSON nodes to load and check for
depth, not five per line, and a line's string is taken apart and checked only when it is used. A string of
another shape is no verdict (its line is judged again), and is not written back.
"""
from __future__ import annotations

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
        self._volumes: tuple[Volume, ...] | None = None
        self._holds: bool | None = None
        self._log_hash: Any = None          # SHA-1 over the LOG judged on, as far as it was hashed
        self._hashed = 0
        self._fresh: dict[str, Kept] = {}

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

    def save(self, head: str, *, in_history: Callable[[str], bool], log: Callable[[], bytes]) -> None:
        """Keep this process's verdicts with those still holding, as of `head` and LOG as read. Nothing is written
        when nothing was judged: the memo holds for the next process as it stands."""
        if not self._fresh or not is_commit_id(head):
            return
        kept = {key: value for key, value in self._kept.items()
                if key not in self._fresh and _entry(value) is not None} if self._proven(in_history, log) else {}
        data = log()
        if self._log_hash is None or self._hashed > len(data):
            self._log_hash, self._hashed = hashlib.sha1(), 0
        self._log_hash.update(memoryview(data)[self._hashed:])
        proofs.keep_proofs(self.root, self.kind, {
            "valid_at": head, "paths": self.paths, "log": [len(data), self._log_hash.hexdigest()],
            "volumes": [volume.blob for volume in self._held()],
            "verdicts": {**kept, **{key: _written(entry) for key, entry in self._fresh.items()}}})

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
                                                            list[str] | None] | None:
    """(the HEAD they were kept at, the LOG proof, the verdicts as written, the volumes' ids then or None) of a
    memo for these `paths`; None when it is not one gitmem wrote. Each verdict is checked when its line is asked
    about (`_entry`)."""
    valid_at, log_proof, verdicts = found.get("valid_at"), found.get("log"), found.get("verdicts")
    sealed = found.get("volumes")
    if not (found.get("paths") == paths and is_commit_id(valid_at) and isinstance(verdicts, dict)
            and isinstance(log_proof, list) and len(log_proof) == 2 and type(log_proof[0]) is int
            and log_proof[0] >= 0 and is_commit_id(log_proof[1])
            and (sealed is None or isinstance(sealed, list) and all(is_commit_id(blob) for blob in sealed))):
        return None
    return str(valid_at), (log_proof[0], str(log_proof[1])), verdicts, sealed


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
