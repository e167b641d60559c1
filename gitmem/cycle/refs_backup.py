"""The human's unpushed history, copied outside the repository before the agent runs and put back after it.

The agent runs as the same user: it can delete a branch, a tag or the stash, expire every reflog and prune, and
then the commits are gone from `.git/objects` for good. So before it runs, everything reachable from the
human's references (branches, tags, notes, and each stash entry: a stash is reachable only from the reflog of
refs/stash) that no remote-tracking branch holds goes into one git bundle. When everything is pushed there is
nothing to write, and no bundle. After the agent, objects the references need and the store lost come back
from the bundle (or, for what the remote held, from the remote), and the guard puts the references back.

A bundle is named by what it holds and stays after the cycle. The kept bundles form a chain (listed oldest
first in the folder's `chain` file): each holds only what neither the remote-tracking refs nor the chain before
it hold, so a cycle whose one new commit is unpushed bundles that commit, not the whole history (a repository
with no remote bundled 105 MB every cycle at 100x), and a cycle whose refs did not change writes nothing. The
chain starts over, one bundle of everything unpushed, when it reaches MAX_CHAIN bundles or when a bundle in it no
longer holds (its tips or prerequisites are gone from the store). A bundle outside the chain whose every tip the
repository holds again, a killed cycle's too, is deleted when the next cycle starts.

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
CHAIN = "chain"                      # the kept bundles the backup is made of, oldest first, one name a line
MAX_CHAIN = 32                       # then one bundle of everything unpushed again: recovery unbundles each one
MAX_TIPS_BYTES = 16 << 20
MAX_HEADER_LINES = 1 << 16
HEX = set("0123456789abcdef")
STEM = "refs-"


class RefsBackupFailed(RunFailure):
    """The human's refs could not be backed up before the agent ran, or put back after it: a cycle failure."""

    exit_code = ExitCode.SALVAGED

    def __init__(self, message: str, *, where: str) -> None:
        super().__init__(message, code=codes.CYCLE_REFS_BACKUP_FAILED, where=where)


def backup_dir(repo: gitio.Repo) -> Path:
    """This repository's folder under the user's state directory, named by its git directory's path."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    ident = hashlib.sha256(str(gitio.common_dir(repo).resolve()).encode()).hexdigest()[:16]
    return Path(base) / "gitmem" / ident


@dataclass
class RefsBackup:
    refs: dict[str, str]                  # the human's references at the start: name -> object id
    stash: list[tuple[str, str]]          # the stash list at the start, newest first: (commit id, message)
    chain: list[Path] = field(default_factory=list)      # the bundles, oldest first; none when the remote held all
    notes: list[str] = field(default_factory=list)        # for LOG Evidence
    messages: list[str] = field(default_factory=list)     # for the cycle's report only

    @property
    def path(self) -> Path | None:
        """The newest bundle of the chain (None when the remote held everything)."""
        return self.chain[-1] if self.chain else None

    @classmethod
    def take(cls, repo: gitio.Repo, refs: dict[str, str], *, cycle: int) -> RefsBackup:
        """Bundle what the remote-tracking refs and the kept chain lack (nothing when they hold it all); then
        delete the kept bundles outside the chain whose tips are all held again. RefsBackupFailed when the backup
        folder cannot be read or the bundle cannot be written."""
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
        if not gitio.unheld(repo, present, held):    # everything is pushed: no bundle is needed, none is kept
            try:
                backup.messages += _prune(repo, folder, keep=[], holders=[*present, *held])
            except OSError as err:
                backup.messages.append(f"could not look for old backup bundles in {folder}: {_why(err)}")
            return backup
        try:
            chain = _kept_chain(repo, folder, held)
            if len(chain) >= MAX_CHAIN:
                chain = []
            base = sorted({*held, *(oid for stem in chain for oid in _read_tips(folder / f"{stem}{TIPS}"))})
            if gitio.unheld(repo, present, base):
                chain = [*chain, _write_bundle(repo, folder, human, stash, tips, base)]
            if chain != _read_chain(folder):
                _write(folder / CHAIN, "".join(f"{stem}\n" for stem in chain).encode())
            backup.messages += _prune(repo, folder, keep=chain, holders=[*present, *held])
        except (OSError, gitio.RepoError) as err:
            raise RefsBackupFailed(f"the runner could not back up the unpushed branches, tags and stashes to {folder} "
                                   f"before the agent ran, so the agent did not run ({_why(err)}); make that "
                                   "directory readable and writable by this user (or set XDG_STATE_HOME) and run "
                                   "the cycle again", where=str(folder)) from None
        backup.chain = [folder / f"{stem}{BUNDLE}" for stem in chain]
        return backup

    def missing(self, repo: gitio.Repo) -> list[str]:
        """Objects the human's references or stashes name that the object store no longer has."""
        wanted = {*self.refs.values(), *(oid for oid, _ in self.stash)}
        return sorted(oid for oid in wanted if not gitio.has_object(repo, oid))

    def recover(self, repo: gitio.Repo) -> list[str]:
        """Put lost objects back: from the chain of bundles, oldest first (each one's prerequisites are the
        remote's commits and the tips of those before it), and what the remote held from the remote. Returns the
        objects still missing (none when all came back); what was done is in `notes`."""
        lost = self.missing(repo)
        if not lost:
            return []
        problems: list[str] = []
        failed = self._unbundle(repo, self.chain, problems)
        if self.missing(repo):       # what the remote held; and a bundle whose prerequisites the agent deleted too
            self._fetch(repo, problems)
            if failed:
                self._unbundle(repo, failed, problems)
        still = self.missing(repo)
        back = len(lost) - len(still)
        if back:
            self.notes.append(f"put back {back} of the human's commit(s) or tag(s) that the agent had deleted from "
                              "the object store (from the runner's backup bundle)")
        if still:
            kept = f"; the backup is kept at {self.path.parent} (`git bundle unbundle` each bundle its `chain` " \
                   "file lists, in order)" if self.path else ""
            self.notes.append(f"could not put back {len(still)} object(s) the human's refs name ({', '.join(problems)})"
                              f"{kept}")
        return still

    @staticmethod
    def _unbundle(repo: gitio.Repo, chain: list[Path], problems: list[str]) -> list[Path]:
        """Unbundle each of `chain` in order; returns those that failed, with why in `problems`."""
        failed = []
        for path in chain:
            try:
                gitio.unbundle(repo, path)
            except (OSError, gitio.RepoError) as err:      # its prerequisites (pushed commits) may be gone too
                problems.append(f"the bundle {path.name}: {_why(err)}")
                failed.append(path)
        return failed

    @staticmethod
    def _fetch(repo: gitio.Repo, problems: list[str]) -> None:
        for remote in gitio.remote_names(repo):
            try:
                gitio.fetch_objects(repo, remote)
            except gitio.RepoError as err:
                problems.append(f"{remote}: {_why(err)}")


def _write_bundle(repo: gitio.Repo, folder: Path, human: dict[str, str], stash: list[tuple[str, str]],
                  tips: dict[str, str], base: list[str]) -> str:
    """Write (or find already written) the bundle of what `base` does not hold; returns its name."""
    name = manifest_name(human, stash, base)
    path = folder / f"{name}{BUNDLE}"
    if path.is_file() and (folder / f"{name}{TIPS}").is_file():
        return name        # the same refs, stashes and prerequisites as a bundle already kept: not rewritten
    _private(folder)
    listing = "".join(f"{oid} {label}\n" for oid, label in sorted(tips.items()))
    _write(folder / f"{name}{TIPS}", listing.encode())
    partial = folder / f"{name}{BUNDLE}{PARTIAL}"
    try:
        gitio.create_bundle(repo, partial, sorted(human), [oid for oid, _ in stash[1:]], base)
        os.replace(partial, path)
    finally:
        _unlink(partial)
    return name


def _read_chain(folder: Path) -> list[str]:
    """The chain file's names; empty when there is none (an OSError other than a missing file is the caller's)."""
    try:
        text = (folder / CHAIN).read_bytes()[:MAX_TIPS_BYTES].decode("ascii", "replace")
    except (FileNotFoundError, NotADirectoryError):
        return []
    names = text.split()
    return names if all(name.startswith(STEM) and set(name[len(STEM):]) <= HEX for name in names) else []


def _kept_chain(repo: gitio.Repo, folder: Path, held: list[str]) -> list[str]:
    """The kept chain when every bundle in it still holds: its file is there, its tips are in the store, and its
    prerequisites are held now, by the remote-tracking refs `held` or by the tips of the bundles before it (a
    remote that was force-pushed since may no longer have what an old bundle took as pushed). Else none: the
    next bundle then holds everything unpushed."""
    chain = _read_chain(folder)
    before: list[str] = []
    for stem in chain:
        tips = _read_tips(folder / f"{stem}{TIPS}")
        bundle = folder / f"{stem}{BUNDLE}"
        if not tips or not bundle.is_file() or not all(gitio.has_object(repo, oid) for oid in tips) or \
                gitio.unheld(repo, _prerequisites(bundle), [*held, *before]):
            return []
        before += tips
    return chain


def _prerequisites(bundle: Path) -> list[str]:
    """The commits a bundle's header names as prerequisites (`-<id>` lines): what must be in the store to
    unbundle it. A header that cannot be read gives one impossible id, so the bundle does not count as holding."""
    found: list[str] = []
    try:
        with bundle.open("rb") as stream:        # the header only: the pack after it may be 100 MB
            for _ in range(MAX_HEADER_LINES):
                line = stream.readline(4096)
                if line in (b"\n", b""):
                    return found
                if line.startswith(b"-"):
                    found.append(line[1:].split(b" ", 1)[0].strip().decode("ascii"))
    except (OSError, UnicodeDecodeError):
        pass
    return ["0" * 40]


def manifest_name(human: dict[str, str], stash: list[tuple[str, str]], held: list[str]) -> str:
    """A bundle's name, from what it holds: the same refs, stash entries and prerequisites give the same name, so
    a repository whose state did not change since the last cycle (an annotated tag is always in the bundle: no
    remote-tracking ref holds a tag object) reuses its bundle instead of writing one each cycle."""
    lines = [*(f"{oid} {name}" for name, oid in sorted(human.items())), *(oid for oid, _ in stash),
             *(f"^{oid}" for oid in held)]
    return "refs-" + hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16]


def _prune(repo: gitio.Repo, folder: Path, *, keep: list[str], holders: list[str]) -> list[str]:
    """Delete the kept bundles outside the chain `keep` (a killed cycle's, or an earlier chain's) whose every tip
    the repository holds again: its references and stash entries now, or the remote-tracking refs; the chain holds
    what they reach. A bundle with a tip nothing holds stays: it may be the only copy of what an agent deleted in a
    cycle that never put it back. Pruned this way, never by age: a newer cycle's bundle is of what was there when
    it started, after any such loss."""
    try:
        listed = sorted(folder.iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return []
    stays: list[str] = []
    for path in listed:
        stem = path.name.split(".", 1)[0]
        if path.name.endswith(PARTIAL):           # a write a killed cycle left: the cycle lock says no other runs
            _unlink(path)
        elif path.name.endswith(TIPS) and stem not in keep:
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
