"""The human's unpushed history, copied outside the repository before the agent runs and put back after it.

The agent runs as the same user: it can delete a branch, a tag or the stash, expire every reflog and prune, and
then the commits are gone from `.git/objects` for good. So before it runs, everything reachable from the
human's references (branches, tags, notes, and each stash entry: a stash is reachable only from the reflog of
refs/stash) that no remote-tracking branch holds goes into one git bundle. When everything is pushed there is
nothing to write, and no bundle. After the agent, objects the references need and the store lost come back
from the bundle (or, for what the remote held, from the remote), and the guard puts the references back.

Where: `$XDG_STATE_HOME/gitmem/<repo-id>/` (else `~/.local/state/gitmem/<repo-id>/`), in a 0700 directory.
Outside the work tree, so no commit or `git clean` takes it; outside `.git`, so `gc`, `rm -rf .git/objects`
or a new clone leave it alone; not the temp dir, which may be shared, cleaned at boot or a small tmpfs, while a
bundle left by a killed cycle is the human's way back. The agent has the same uid and can find it: without a
sandbox this is best-effort recovery, not secrecy.
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from gitmem import codes, gitio
from gitmem.errors import ExitCode, RunFailure
from gitmem.secrets import scrub

NOT_HUMAN = ("refs/remotes/",)       # remote-tracking branches: what the remote holds, never backed up


class RefsBackupFailed(RunFailure):
    """The human's refs could not be backed up before the agent ran, or put back after it: a cycle failure."""

    exit_code = ExitCode.SALVAGED

    def __init__(self, message: str) -> None:
        super().__init__(message, code=codes.CYCLE_REFS_BACKUP_FAILED, where="(cycle)")


def backup_dir(repo: gitio.Repo) -> Path:
    """This repository's folder under the user's state directory, named by its git directory's path."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    ident = hashlib.sha256(str(gitio.common_dir(repo).resolve()).encode()).hexdigest()[:16]
    return Path(base) / "gitmem" / ident


@dataclass
class RefsBackup:
    refs: dict[str, str]                  # the human's references at the start: name -> object id
    stash: list[tuple[str, str]]          # the stash list at the start, newest first: (commit id, message)
    path: Path | None = None              # the bundle; None when the remote held everything
    notes: list[str] = field(default_factory=list)
    keep: bool = False                    # something could not be put back: the bundle stays for the human

    @classmethod
    def take(cls, repo: gitio.Repo, refs: dict[str, str], *, cycle: int) -> RefsBackup:
        """Bundle what the remote-tracking branches lack; RefsBackupFailed when it cannot be written."""
        human = {name: target for name, target in refs.items()
                 if name != "HEAD" and not name.startswith(NOT_HUMAN) and not target.startswith("ref: ")}
        stash = gitio.stash_entries(repo)
        held = sorted(set(gitio.remote_tips(repo).values()))
        backup = cls(human, stash)
        if not gitio.unpushed(repo, [*human.values(), *(oid for oid, _ in stash)], held):
            return backup
        folder = backup_dir(repo)
        path = folder / f"cycle-{cycle}-{os.getpid()}.bundle"
        try:
            _private(folder)
            gitio.create_bundle(repo, path, sorted(human), [oid for oid, _ in stash[1:]], held)
        except (OSError, gitio.RepoError) as err:
            _unlink(path)
            raise RefsBackupFailed(f"the runner could not back up the unpushed branches, tags and stashes to {folder} "
                                   f"before the agent ran, so the agent did not run ({_why(err)}); make that "
                                   "directory writable (or set XDG_STATE_HOME) and run the cycle again") from None
        backup.path = path
        return backup

    def missing(self, repo: gitio.Repo) -> list[str]:
        """Objects the human's references or stashes name that the object store no longer has."""
        wanted = {*self.refs.values(), *(oid for oid, _ in self.stash)}
        return sorted(oid for oid in wanted if not gitio.has_object(repo, oid))

    def recover(self, repo: gitio.Repo) -> list[str]:
        """Put lost objects back: from the bundle, and what the remote held from the remote. Returns the objects
        still missing (none when all came back); what was done is in `notes`."""
        lost = self.missing(repo)
        if not lost:
            return []
        problems: list[str] = []
        if self.path is not None:
            try:
                gitio.unbundle(repo, self.path)
            except (OSError, gitio.RepoError) as err:      # its prerequisites (pushed commits) may be gone too
                problems.append(f"the bundle: {_why(err)}")
        if self.missing(repo):
            for remote in gitio.remote_names(repo):
                try:
                    gitio.fetch_objects(repo, remote)
                except gitio.RepoError as err:
                    problems.append(f"{remote}: {_why(err)}")
        still = self.missing(repo)
        back = len(lost) - len(still)
        if back:
            self.notes.append(f"put back {back} of the human's commit(s) or tag(s) that the agent had deleted from "
                              "the object store (from the runner's backup bundle)")
        if still:
            self.keep = True
            kept = f"; the backup is kept at {self.path} (`git bundle unbundle` it)" if self.path else ""
            self.notes.append(f"could not put back {len(still)} object(s) the human's refs name ({', '.join(problems)})"
                              f"{kept}")
        return still

    def discard(self) -> None:
        """The cycle ended with every reference back: the bundle is not needed any more."""
        if self.path is None or self.keep:
            return
        _unlink(self.path)
        try:
            self.path.parent.rmdir()
        except OSError:
            pass            # another cycle's bundle, or a killed cycle's, is still there
        self.path = None


def _private(folder: Path) -> None:
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(folder, 0o700)


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass


def _why(err: BaseException) -> str:
    text = getattr(err, "output", "") or str(err)
    return scrub(" ".join(text.split()))[-300:]
