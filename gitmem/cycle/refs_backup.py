"""The human's unpushed history, copied outside the repository before the agent runs and put back after it.

The agent runs as the same user: it can delete a branch, a tag or the stash, expire every reflog and prune, and
then the commits are gone from `.git/objects` for good. So before it runs, everything reachable from the
human's references (branches, tags, notes, and each stash entry: a stash is reachable only from the reflog of
refs/stash) that no remote-tracking branch holds goes into one git bundle. When everything is pushed there is
nothing to write, and no bundle. After the agent, objects the references need and the store lost come back
from the bundle (or, for what the remote held, from the remote), and the guard puts the references back.

A bundle is named by what it holds and stays after the cycle: the next cycle with the same refs writes nothing
(a repository with an annotated tag, which no remote-tracking ref can hold, bundled it anew each cycle), and a
bundle whose tips the repository holds again, a killed cycle's too, is deleted when the next cycle starts.

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
BUNDLE, TIPS, PARTIAL = ".bundle", ".tips", ".partial"     # a bundle, its tips (refs and stashes), a write under way
MAX_TIPS_BYTES = 16 << 20
HEX = set("0123456789abcdef")


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
    notes: list[str] = field(default_factory=list)        # for LOG Evidence
    messages: list[str] = field(default_factory=list)     # for the cycle's report only

    @classmethod
    def take(cls, repo: gitio.Repo, refs: dict[str, str], *, cycle: int) -> RefsBackup:
        """Bundle what the remote-tracking refs lack (or find that bundle already kept); RefsBackupFailed when it
        cannot be written. Kept bundles whose tips are all held again go first."""
        human = {name: target for name, target in refs.items()
                 if name != "HEAD" and not name.startswith(NOT_HUMAN) and not target.startswith("ref: ")}
        stash = gitio.stash_entries(repo)
        # What a remote advertised at the last fetch: its branches' commits, and any tag a remote-tracking ref
        # names itself (a `refs/tags/*:refs/remotes/…` refspec); a tag fetched into refs/tags is
        # indistinguishable from one made here, so it counts as unpushed (see `manifest`).
        held = sorted({*gitio.remote_tips(repo).values(),
                       *(target for name, target in refs.items()
                         if name.startswith(NOT_HUMAN) and not target.startswith("ref: "))})
        backup = cls(human, stash)
        folder = backup_dir(repo)
        tips = {**{target: name for name, target in human.items()},
                **{oid: f"stash@{{{n}}}" for n, (oid, _) in enumerate(stash)}}
        present = [oid for oid in tips if gitio.has_object(repo, oid)]
        name = manifest_name(human, stash, held)
        backup.messages += _prune(repo, folder, keep=name, holders=[*present, *held])
        if not gitio.unheld(repo, present, held):
            return backup
        path = folder / f"{name}{BUNDLE}"
        backup.path = path
        if path.is_file() and (folder / f"{name}{TIPS}").is_file():
            return backup         # the same refs, stashes and prerequisites as a bundle already kept: not rewritten
        try:
            _private(folder)
            listing = "".join(f"{oid} {label}\n" for oid, label in sorted(tips.items()))
            _write(folder / f"{name}{TIPS}", listing.encode())
            partial = folder / f"{name}{BUNDLE}{PARTIAL}"
            gitio.create_bundle(repo, partial, sorted(human), [oid for oid, _ in stash[1:]], held)
            os.replace(partial, path)
        except (OSError, gitio.RepoError) as err:
            _unlink(folder / f"{name}{BUNDLE}{PARTIAL}")
            raise RefsBackupFailed(f"the runner could not back up the unpushed branches, tags and stashes to {folder} "
                                   f"before the agent ran, so the agent did not run ({_why(err)}); make that "
                                   "directory writable (or set XDG_STATE_HOME) and run the cycle again") from None
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
            kept = f"; the backup is kept at {self.path} (`git bundle unbundle` it)" if self.path else ""
            self.notes.append(f"could not put back {len(still)} object(s) the human's refs name ({', '.join(problems)})"
                              f"{kept}")
        return still


def manifest_name(human: dict[str, str], stash: list[tuple[str, str]], held: list[str]) -> str:
    """A bundle's name, from what it holds: the same refs, stash entries and prerequisites give the same name, so
    a repository whose state did not change since the last cycle (an annotated tag is always in the bundle: no
    remote-tracking ref holds a tag object) reuses its bundle instead of writing one each cycle."""
    lines = [*(f"{oid} {name}" for name, oid in sorted(human.items())), *(oid for oid, _ in stash),
             *(f"^{oid}" for oid in held)]
    return "refs-" + hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16]


def _prune(repo: gitio.Repo, folder: Path, *, keep: str, holders: list[str]) -> list[str]:
    """Delete the kept bundles (a killed cycle's, or the last cycle's) whose every tip the repository holds again:
    its references and stash entries now, or the remote-tracking refs. A bundle with a tip nothing holds stays:
    it may be the only copy of what an agent deleted in a cycle that never put it back. Pruned this way, never by
    age: a newer cycle's bundle is of what was there when it started, after any such loss."""
    try:
        listed = sorted(folder.iterdir())
    except OSError:
        return []
    stays: list[str] = []
    for path in listed:
        stem = path.name.split(".", 1)[0]
        if path.name.endswith(PARTIAL):           # a write a killed cycle left: the cycle lock says no other runs
            _unlink(path)
        elif path.name.endswith(TIPS) and stem != keep:
            tips = _read_tips(path)
            bundle = folder / f"{stem}{BUNDLE}"
            if not bundle.exists() or (tips and not gitio.unheld(repo, tips, holders)):
                _unlink(bundle)
                _unlink(path)
            else:
                stays.append(f"the backup {bundle} holds history no reference holds any more (an earlier cycle "
                             "did not put it back): `git bundle list-heads` and `git bundle unbundle` it, or "
                             "delete it with its .tips file")
    return stays


def _read_tips(path: Path) -> list[str]:
    """The object ids a bundle's tips file lists; empty (so the bundle is kept) when it is not one."""
    try:
        text = path.read_bytes()[:MAX_TIPS_BYTES].decode("ascii")
    except (OSError, UnicodeDecodeError):
        return []
    tips = [line.split(" ", 1)[0] for line in text.splitlines()]
    return tips if tips and all(len(oid) in (40, 64) and set(oid) <= HEX for oid in tips) else []


def _write(path: Path, data: bytes) -> None:
    partial = path.with_name(path.name + PARTIAL)
    partial.write_bytes(data)
    os.replace(partial, path)


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
