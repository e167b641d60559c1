"""LOG's whole history, in order: its sealed volumes by number, then LOG.md (rules 6, `gitmem.memory.volumes`).

The one reader of "all of LOG" that recall, the report, export and the close's day share. Readers of the tail
(the context, status, the cycle) read LOG.md alone and never come here.

A volume is history only when git holds it: the volumes are those tracked in a commit's tree (HEAD's for the
work tree), regular files only, and their bytes are read from git by the blob id that tree names. A file an agent
planted under `history/`, a link, or a tracked volume edited in the work tree is never read: a volume never
changes once sealed, so the committed bytes are the volume. LOG.md is read as its readers always read it (the
file on disk, confined to the work tree), since what a cycle appends is history before it is committed.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from gitmem import gitio
from gitmem.confined import files
from gitmem.memory import fences, log, volumes
from gitmem.memory.log import LogEntry, TailSource
from gitmem.workspace import Workspace, proofs

Enough = Callable[[tuple[LogEntry, ...]], bool]
KEPT = 4             # volumes' bytes a history keeps in memory (about 300 KB each)
# What is kept of each volume read (`VolumeFacts`), outside the repository (gitmem.workspace.proofs).
FACTS_KIND = "volume-facts"
FACTS_MAX_BYTES = 8 << 20        # far past what 10,000 volumes give (about 100 bytes a volume)


@dataclass(frozen=True)
class Volume:
    number: int
    path: str        # repository-relative, `history/LOG-0003.md`
    blob: str        # its git blob id in the commit it was found in


def tracked(repo: gitio.Repo, log_path: str, commit: str | None = None) -> tuple[Volume, ...]:
    """The volumes of `log_path` a commit holds (default HEAD), by number; none on an unborn branch. Listed once
    per commit and repository in a process: a commit never changes, and a close asks for HEAD's history at each
    of its steps (nine times; 269 volumes at 100x)."""
    commit_id = commit if commit is not None else gitio.head_id(repo)
    if commit_id is None:
        return ()
    # Kept by HEAD's full id (what `head_id` gives), never by a revision a caller names, which may move.
    known = (str(gitio.git_dir(repo)), commit_id, log_path) if commit is None else None
    if known in _TRACKED:
        return _TRACKED[known]
    snapshot = gitio.commit_snapshot(repo, commit_id, ())
    listing = (snapshot.entries_in(volumes.volume_folder(log_path)) if snapshot is not None else None) or {}
    found = {path: oid for path, (oid, mode) in listing.items() if oid is not None and mode in files.BLOB_MODES}
    listed = tuple(Volume(number, path, found[path]) for number, path in volumes.numbered(log_path, found))
    if known is not None:
        if len(_TRACKED) >= TRACKED_KEPT:
            del _TRACKED[next(iter(_TRACKED))]
        _TRACKED[known] = listed
    return listed


_TRACKED: dict[tuple[str, str, str], tuple[Volume, ...]] = {}     # (git dir, commit id, LOG's path): `tracked`
TRACKED_KEPT = 4     # HEADs whose volume listing a process keeps (ids only: a close asks of one or two)


class LogHistory:
    """LOG's history for one workspace. It is a `log.TailSource` of LOG.md itself (so a reader of the tail takes
    it as it took LOG.md), and reaches back into the volumes, newest first, only when a reader asks for it."""

    def __init__(self, live: TailSource, found: tuple[Volume, ...], read: Callable[[Volume], bytes],
                 live_bytes: Callable[[], bytes], log_path: str = "LOG.md", *,
                 facts: VolumeFacts | None = None) -> None:
        self.live, self.volumes, self.log_path = live, found, log_path
        self._read, self._live_bytes = read, live_bytes
        self._facts = facts
        self._cache: dict[int, bytes] = {}
        self._placed: dict[int, tuple[LogEntry, str]] = {}     # id -> (entry, volume path) of what live_tail read

    def where(self, entry: LogEntry) -> str:
        """`path:line` of an entry this history handed out (`live_tail`): a volume's path for an entry read from
        it, whose line counts the volume's lines; LOG.md's for the others."""
        placed = self._placed.get(id(entry))
        path = placed[1] if placed is not None and placed[0] is entry else self.log_path
        return f"{path}:{entry.line}"

    # -- LOG.md, as a TailSource --------------------------------------------------------------------------
    def size(self) -> int:
        return self.live.size()

    def text_from(self, start: int) -> tuple[str, int]:
        return self.live.text_from(start)

    def line_at(self, offset: int) -> int:
        return self.live.line_at(offset)

    def fence_open_at(self, offset: int) -> bool:
        return self.live.fence_open_at(offset)

    # -- the volumes ----------------------------------------------------------------------------------------
    def volume_bytes(self, volume: Volume) -> bytes:
        """A volume's bytes; the last few read are kept, so a reader of all history (recall's first build: 75 MB
        of volumes at 100x) holds a few hundred KB of them at a time, not all."""
        found = self._cache.pop(volume.number, None)
        if found is None:
            found = self._read(volume)
            if len(self._cache) >= KEPT:
                del self._cache[next(iter(self._cache))]
        self._cache[volume.number] = found
        return found

    def volume_entries(self, volume: Volume) -> tuple[LogEntry, ...]:
        """A volume's entries as readers take them (amended ones give way), with the volume's own line numbers."""
        return volumes.volume_entries(self.volume_bytes(volume))

    def sealed_since(self, start: datetime | None, *, holding: str | None = None) -> str:
        """The text of the volumes a reader of history from `start` needs (all of them for None), oldest first,
        without their titles: put before LOG.md's text, LOG as it would read unsealed (but for the lines
        amendments name). Volumes are read newest first, and only while history before `start` is not reached:
        none when LOG.md's first entry is older than `start`, so a recent range reads no volume at all.
        With `holding`, "" also when none of those volumes holds that text (a reader that has no use for text
        without it): told from what is kept of each volume (`VolumeFacts`), so that a volume is read once for
        it, not by every close (13 volumes back to a month-old question, 3.6 MB at 100x)."""
        if not self.volumes or (start is not None and _opens_before(self._live_bytes(), start)):
            return ""
        if holding is not None and self._facts is not None and not self._facts.any_holds(self._reached(start),
                                                                                          holding, self):
            return ""
        parts: list[bytes] = []
        for volume in reversed(self.volumes):
            parts.append(volumes.body(self.volume_bytes(volume)))
            if start is not None and _opens_before(parts[-1], start):
                break
        return b"".join(reversed(parts)).decode("utf-8", "replace")

    def _reached(self, start: datetime | None) -> list[Volume]:
        """The volumes `sealed_since(start)` reads, newest first, as what is kept of them tells."""
        assert self._facts is not None
        reached = []
        for volume in reversed(self.volumes):
            reached.append(volume)
            if start is not None and self._facts.opens_before(volume, start, self):
                break
        return reached

    def live_tail(self, enough: Enough) -> tuple[tuple[LogEntry, ...], bool]:
        """(the last entries of history as readers take them, whether the read reached its start): LOG.md read
        back from its end (`log.tail_entries`), then whole volumes, newest first, until `enough` of them. Each part
        is taken as readers take it (`log.live` for LOG.md, `volume_entries` for a volume): an amendment stays in
        the part of the entry it amends, and lines count within each part."""
        read = log.tail_entries(self.live, lambda entries: enough(log.live(entries)))
        entries = log.live(read.entries)
        if not read.whole or enough(entries):
            return entries, read.whole and not self.volumes
        for at in range(len(self.volumes) - 1, -1, -1):
            read_back = self.volume_entries(self.volumes[at])
            self._placed.update((id(e), (e, self.volumes[at].path)) for e in read_back)
            entries = read_back + entries
            if enough(entries):
                return entries, at == 0
        return entries, True


def _opens_before(data: bytes, start: datetime) -> bool:
    """Whether the first entry of LOG bytes `data` is dated before `start` (LOG is in time order, GM302)."""
    opens = _opens_at(data)
    return opens is not None and opens < start


def _opens_at(data: bytes) -> datetime | None:
    """When the first entry of LOG bytes `data` is dated; None when it has no entry whose heading reads."""
    at = fences.first_heading(data, b"## ")
    if at is None:
        return None
    parsed = log.parse_any_heading(fences.line_starting_at(data, at)[3:].decode("utf-8", "replace"))
    return parsed[0].moment if parsed is not None else None


class VolumeFacts:
    """What is kept of each volume read, by its blob id: when its first entry is dated, and which texts it holds
    (those asked about). A blob id names its bytes, and a volume never changes, so a fact kept is true for as
    long as the blob is the volume. Kept outside the repository (gitmem.workspace.proofs), where the agent
    cannot plant a volume's "holds no `- Blocked:`"; a document of another shape is no fact (the volume is read)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._known: dict[str, object] | None = None       # read when first asked: most histories never are
        self._learned = False

    @property
    def _kept(self) -> dict[str, object]:
        if self._known is None:
            found = proofs.read_proofs(self.root, FACTS_KIND, max_bytes=FACTS_MAX_BYTES).get("volumes")
            self._known = found if isinstance(found, dict) else {}
        return self._known

    def opens_before(self, volume: Volume, start: datetime, history: LogHistory) -> bool:
        opens = self._of(volume, history)[0]
        return opens is not None and opens < start

    def any_holds(self, reached: list[Volume], text: str, history: LogHistory) -> bool:
        """Whether any of `reached` holds `text` (its bytes, as UTF-8)."""
        found = any(self._holds(volume, text, history) for volume in reached)
        if self._learned:
            proofs.keep_proofs(self.root, FACTS_KIND, {"volumes": self._kept})
            self._learned = False
        return found

    def _holds(self, volume: Volume, text: str, history: LogHistory) -> bool:
        holds = self._of(volume, history)[1]
        if text not in holds:
            holds[text] = text.encode("utf-8") in volumes.body(history.volume_bytes(volume))
            self._learned = True
        return holds[text]

    def _of(self, volume: Volume, history: LogHistory) -> tuple[datetime | None, dict[str, bool]]:
        """(when the volume's first entry is dated, what is known of the texts it holds), read once."""
        kept = self._kept.get(volume.blob)
        if isinstance(kept, list) and len(kept) == 2 and (kept[0] is None or isinstance(kept[0], str)) \
                and isinstance(kept[1], dict) and all(type(v) is bool for v in kept[1].values()):
            opened = _instant(kept[0]) if kept[0] is not None else None
            if kept[0] is None or opened is not None:
                return opened, kept[1]
        opens = _opens_at(volumes.body(history.volume_bytes(volume)))
        holds: dict[str, bool] = {}
        self._kept[volume.blob] = [opens.isoformat() if opens is not None else None, holds]
        self._learned = True
        return opens, holds


def _instant(text: str) -> datetime | None:
    """A kept date as `_of` writes it, an instant with its zone; None for anything else (a date without a zone
    cannot be compared with the moment asked about)."""
    try:
        found = datetime.fromisoformat(text)
    except ValueError:
        return None
    return found if found.utcoffset() is not None else None


def of(ws: Workspace) -> LogHistory:
    """The history of `ws`'s LOG: the volumes HEAD holds, then LOG.md in the work tree (`ws.log_source()`). A
    folder of memory files outside git has no volumes: only what git holds is sealed."""
    try:
        repo = ws.repo if ws.state_dir is not None else None
    except gitio.RepoError:
        repo = None
    return in_repo(repo, ws.root, ws.config.path("log"), ws.log_source())


def in_repo(repo: gitio.Repo | None, root: Path, rel: str, live: TailSource | None = None) -> LogHistory:
    """The history of the LOG at `rel` in the work tree `root`: the volumes HEAD holds (none without `repo`), then
    LOG.md read back through `live` (default: the file, with no line cache)."""
    from gitmem.workspace.head_and_tail import FileSource

    found = tracked(repo, rel) if repo is not None else ()

    def read(volume: Volume) -> bytes:
        assert repo is not None        # a volume is only ever found in a repository
        return gitio.blob(repo, volume.blob)

    return LogHistory(live if live is not None else FileSource(root, rel, None), found, read,
                      lambda: files.read_bytes(root, rel) or b"", rel,
                      facts=VolumeFacts(root) if found else None)
