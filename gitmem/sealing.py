"""The runner's seal (rules 6): what a cycle's or a close's commit writes beside the LOG entry it adds.

When LOG.md holds `volumes.SEAL_AT` entries or more, its oldest go, byte for byte, into new volumes under
`history/`; NOW.md keeps its newest `volumes.NOW_BLOCKS_KEPT` blocks. `gitmem.memory.volumes` plans both; this
module writes the plan into the work tree and says what the commit must take. Only the runner seals, and always
in the commit of the entry that made the seal due, so every commit of LOG.md is either an append or a seal
that `check` proves from the change alone.

The volumes are numbered on from the last one HEAD's tree holds: a file in the work tree proves nothing (an
agent may have planted `history/LOG-0009.md`), and a volume is written only where nothing is. Every file is
written atomically (gitmem.confined.files: never through a link); a write that fails puts back what was
written before it, and `undo` puts back the whole seal when the commit after it does not happen: a failed
cycle or close leaves no volume behind, and LOG.md and NOW.md as they were.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from gitmem import gitio
from gitmem.confined import files
from gitmem.memory import volumes
from gitmem.workspace import Workspace


@dataclass(frozen=True)
class Sealed:
    """What `seal` wrote: the paths the commit takes for it, and what they held before."""

    files: dict[str, bytes] = field(default_factory=dict)   # new volumes, then LOG.md and NOW.md when rewritten
    before: dict[str, bytes] = field(default_factory=dict)  # LOG.md and NOW.md as they were, for `undo`
    notes: tuple[str, ...] = ()                             # why a due seal was not written (for the output)

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(self.files)

    @property
    def volumes(self) -> tuple[str, ...]:
        return tuple(path for path in self.files if path not in self.before)


def _head_files(ws: Workspace, log_path: str) -> list[str]:
    return gitio.head_files_under(ws.repo, volumes.volume_folder(log_path))


def _next_volume(held: list[str], log_path: str) -> int:
    run = volumes.numbered(log_path, held)
    return run[-1][0] + 1 if run else 1


def seal(ws: Workspace, log_data: bytes | None, now_data: bytes | None) -> Sealed:
    """Seal `log_data` (LOG.md as the runner is about to commit it) and keep `now_data`'s newest blocks: write
    the new volumes, LOG.md and NOW.md, and return what was written. Nothing is written when nothing is due."""
    log_path, now_path = ws.config.path("log"), ws.config.path("now")
    writes: dict[str, bytes] = {}
    notes: list[str] = []
    held = _head_files(ws, log_path) if log_data is not None else []
    planned = volumes.plan(log_data, log_path, _next_volume(held, log_path)) if log_data is not None else None
    if planned is not None:
        paths = [volumes.volume_path(log_path, number) for number, _ in planned.volumes]
        # A file named like the volume after the seal's last would join the volumes unread (`volumes.numbered`).
        stray = volumes.stray_after(log_path, held, planned.volumes[-1][0])
        taken = [path for path in paths if not _free(ws, path)] + ([stray] if stray is not None else [])
        if taken:
            notes.append(f"did not seal {log_path}: {taken[0]} is named like one of its volumes but no seal wrote it "
                         "(a file of the work tree or of the project, or the way to it is not a plain folder); "
                         "move it away, and the next cycle seals")
        else:
            writes.update(zip(paths, (content for _, content in planned.volumes), strict=True))
            writes[log_path] = planned.live
    if now_data is not None:
        kept = volumes.keep_newest_blocks(now_data, volumes.NOW_BLOCKS_KEPT)
        if kept != now_data:
            writes[now_path] = kept
    before = {path: data for path, data in ((log_path, log_data), (now_path, now_data))
              if path in writes and data is not None}
    sealed = Sealed(writes, before, tuple(notes))
    _write(ws, sealed)
    return sealed


def _free(ws: Workspace, path: str) -> bool:
    """Whether a volume may be written at `path`: nothing is there, nor a link or a file on the way to it."""
    return files.mode(ws.root, path) is None


def _write(ws: Workspace, sealed: Sealed) -> None:
    """Write every file of the seal (volumes first: LOG.md loses its entries only once they are safe), or none."""
    done: dict[str, bytes] = {}
    try:
        for path, data in sealed.files.items():
            files.write_bytes(ws.root, path, data)
            done[path] = data
    except BaseException:
        undo(ws, Sealed(done, sealed.before))
        raise


def undo(ws: Workspace, sealed: Sealed) -> None:
    """Put the work tree back as it was before `sealed` was written: its volumes removed (with the folder, when
    the seal made it), LOG.md and NOW.md as they were."""
    for path, data in sealed.before.items():
        if path in sealed.paths:
            files.write_bytes(ws.root, path, data)
    for path in sealed.volumes:
        files.remove_file(ws.root, path)
    if sealed.volumes:
        try:      # only when empty: the folder the seal made; never through a link (rmdir follows none)
            os.rmdir(ws.root / volumes.volume_folder(ws.config.path("log")))
        except OSError:
            pass


def seal_worktree(ws: Workspace) -> Sealed:
    """`seal` of LOG.md and NOW.md as the work tree holds them (the runner has just written both)."""
    return seal(ws, files.read_bytes(ws.root, ws.config.path("log")), files.read_bytes(ws.root, ws.config.path("now")))
