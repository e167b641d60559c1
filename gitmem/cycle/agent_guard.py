"""What the agent may change, enforced around its run: one guard per cycle, taken before the agent starts.

Before: the protected paths (gitmem.agents.protected, plus where a protected symlink points), the paths the ignore
rules hid, the git state files (gitmem.cycle.gitstate) of the repository and of every repository nested in its
work tree (gitmem.gitio.nested_state: a clone kept there, a bare one, where a `.git` file leads; found by the one
bounded walk the box uses too, and what lies past its bound is said in Evidence), every reference, and a child
subreaper for the agent's processes (gitmem.cycle.reaper). After: every process the agent started is ended; git
state and references are put back (the agent's versions of changed state files are kept aside under
`.git/gitmem/guard/`); and the runner commits only paths that were not ignored when the cycle started, listed
under the human's ignore rules (gitmem.cycle.ignore_rules). Each thing undone is one `runner:` note for the LOG
entry's Evidence (`notes`); routine ones (gitmem's own caches) only reach the cycle's messages.
"""
from __future__ import annotations

import os
import posixpath
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field

from gitmem import gitio
from gitmem.agents import bytecode, ignored_tool_dirs, pytest_settings
from gitmem.agents.base import AgentError
from gitmem.agents.protected import Protection
from gitmem.confined.files import GITLINK
from gitmem.cycle import gitstate, ignore_rules, oversize
from gitmem.cycle.gitstate import FileState, StateChange
from gitmem.cycle.reaper import Reaper
from gitmem.cycle.refs_backup import RefsBackup, RefsBackupFailed
from gitmem.gitio import StatePath
from gitmem.memory import volumes
from gitmem.publish.push import RUNNER_NAMESPACE
from gitmem.secrets import scrub
from gitmem.workspace import Workspace, writelock

ASIDE_DIR = "guard"          # under .git/gitmem/: the agent's versions of git state it changed
KEPT_NEW = ("refs/heads/", "refs/tags/", "refs/notes/", "refs/stash")
SHOWN_REFS = 12              # the references the agent made that the cycle's output names; the rest are counted


def _caches() -> tuple[str, ...]:
    """gitmem's own caches and write lock in `.git/gitmem/`: put back silently (a cache loses at most one cycle's
    refresh; the lock file holds nothing)."""
    from gitmem.recall.index import INDEX_FILE
    from gitmem.workspace.head_and_tail import LINES_CACHE
    from gitmem.workspace.statedir import CONFIRMATIONS_CACHE
    from gitmem.workspace.writelock import WRITE_LOCK

    return (INDEX_FILE, CONFIRMATIONS_CACHE, LINES_CACHE, WRITE_LOCK)


@dataclass
class CycleGuard:
    ws: Workspace
    start: str
    branch: str
    cycle: int
    protection: Protection
    ignored: tuple[str, ...]
    files: FileState
    refs: dict[str, str]
    reaper: Reaper
    backup: RefsBackup
    unsafe: RefsBackupFailed | None = None    # the backup could not be written: the agent must not run
    notes: list[str] = field(default_factory=list)       # for LOG Evidence, as `runner: <note>`
    anchor_snapshot: ignored_tool_dirs.AnchorSnapshot | None = None   # taken before the agent runs
    confined: bool = False                                  # every way the agent had to the disk was confined
    ignore_files: dict[str, bytes] = field(default_factory=dict)   # the start commit's `.gitignore` files
    anchors_changed: list[str] = field(default_factory=list)   # which changed while it ran
    anchor_note: str = ""                                   # the one note about them, when any changed
    messages: list[str] = field(default_factory=list)    # for the cycle's report only
    nested: set[str] = field(default_factory=set)        # the repositories inside the tree when it started
    runnable: list[str] = field(default_factory=list)    # files pytest runs by name the agent made or changed
    pinned: ExitStack = field(default_factory=ExitStack)   # the walk for nested git directories, until agent_done

    @classmethod
    def begin(cls, ws: Workspace, *, start: str, branch: str, cycle: int, confined: bool = False) -> CycleGuard:
        repo, config = ws.repo, ws.config
        # The agent's memory writes take the write lock: its file is there before the state is captured.
        writelock.lock_file(gitio.state_dir(repo))
        extra = [*config.agent.protected_paths, *_prompt_dirs(ws), *_volume_dirs(ws)]
        hooks = gitio.config_value(repo, "core.hooksPath")
        if hooks and not posixpath.isabs(hooks) and ".." not in hooks.split("/"):
            extra.append(f"/{hooks.strip('/')}/")          # hooks kept in the tree run on the human's machine
        protection = Protection(extra, shadowed=config.memory_paths().values())
        # A protected symlink protects where it points: editing the target would change what it loads.
        targets = [_inside(path, target) for path, target in gitio.tree_links(repo, start).items()
                   if protection.covers(path)]
        protection = protection.with_paths(t for t in targets if t)
        refs = gitio.references_all(repo)
        unsafe = None
        try:
            backup = RefsBackup.take(repo, refs, cycle=cycle)
        except RefsBackupFailed as err:
            backup, unsafe = RefsBackup({}, []), err
        walk = gitio.nested_walk(ws.root)
        guard = cls(ws, start, branch, cycle, protection, tuple(gitio.ignored(repo)),
                    FileState.capture(_with_nested(gitio.state_paths(repo), gitio.nested_state_paths(repo, walk))),
                    refs, Reaper(), backup, unsafe,
                    messages=list(backup.messages),
                    anchor_snapshot=ignored_tool_dirs.snapshot_tool_dirs(ws.root, clock_dir=gitio.state_dir(repo)),
                    confined=confined,
                    ignore_files=gitio.tree_files_named(repo, start, ignore_rules.IGNORE_FILE))
        guard.nested = oversize.nested_repositories(ws.root, guard.was_ignored)
        if walk.stopped:
            guard.notes.append(past_the_walk(walk.stopped))
            guard.messages.append(guard.notes[-1])
        guard.reaper.start()
        # Last, so that nothing after it can fail before the runner's `finally` that calls agent_done: a pin left
        # behind would give a later walk of this tree in this process a stale answer.
        guard.pinned.enter_context(gitio.pinned_walk(ws.root, walk))    # the box strips what the guard watches
        return guard

    # -- after the agent --------------------------------------------------------------------------------------
    def agent_done(self) -> None:
        """End every process the agent started (call once, right after its run, whatever happened)."""
        self.pinned.close()
        survivors = self.reaper.finish()
        self.notes += survivors
        self.messages += self.reaper.messages + survivors
        self._compare_anchors()
        self._remove_bytecode()

    def _compare_anchors(self) -> None:
        """The trust anchors against their snapshot from before the agent (gitmem.agents.ignored_tool_dirs): with its
        processes ended, nothing changes them after this look. Never put back: the runner cannot know a good
        venv from a bad one; the human is told."""
        root, before = self.ws.root, self.anchor_snapshot
        if before is None:
            return
        ignored_tool_dirs.remove_mount_points(root, before)
        self.anchors_changed = ignored_tool_dirs.changed(root, before, walk=not self.confined)
        if self.anchors_changed:
            self.anchor_note = ignored_tool_dirs.note(self.anchors_changed, before)
            self.notes.append(self.anchor_note)
            self.messages.append(self.anchor_note)

    def _remove_bytecode(self) -> None:
        """The bytecode caches made or changed while the agent ran (gitmem.agents.bytecode), in every mode: the
        box cannot make them read-only, and the human's next import would run them. Removed, never kept aside:
        they are rebuilt from their source. A tracked one is left to the diff and the commit."""
        before = self.anchor_snapshot
        if before is None:
            return
        # pytest's folders by the project's own settings too, as the human's start commit has them and as the
        # agent left them (either may send pytest where its default does not)
        repo = self.ws.repo
        settings = [pytest_settings.project_settings(read) for read in (
            lambda name: gitio.file_at(repo, self.start, name), pytest_settings.tree_reader(self.ws.root))]
        sweep = bytecode.fresh(self.ws.root, before.since_ns, settings)
        sweep.paths = [rel for rel in sweep.paths if gitio.file_id_at(self.ws.repo, self.start, rel) is None]
        # Held (not removed) once the git state is back, where they are git-ignored (`listed`).
        self.runnable = [rel for rel in sweep.runnable if gitio.file_id_at(self.ws.repo, self.start, rel) is None]
        said = bytecode.removal_note(bytecode.remove_swept(self.ws.root, sweep), sweep.cut_short)
        if said:
            self.messages.append(said)
        if sweep.cut_short:        # what was not looked at may still run: the human must hear of it in Evidence
            self.notes.append(said)

    def restore(self) -> AgentError | RefsBackupFailed | None:
        """Put git state and references back; the failure to salvage when the agent moved its own branch, or
        when objects the human's references need are gone and could not be put back."""
        self._remove_locks()      # first: while a lock file is there, git refuses to write what it locks
        self._restore_files()     # then: the alternates, shallow and config files say where objects are
        gitio.forget_cached(self.ws.repo)     # the agent may have pruned what this handle still caches
        lost = set(self.backup.recover(self.ws.repo))
        self.notes += self.backup.notes
        failure: AgentError | RefsBackupFailed | None = self._restore_refs(lost)
        if lost:      # at the bundle they were to come back from, else the references' folder
            bundle = self.backup.path
            failure = RefsBackupFailed("objects the human's references need were deleted during the cycle and could "
                                       f"not be put back: {self.backup.notes[-1]}",
                                       where=str(bundle) if bundle is not None else
                                       gitio.shown_path(self.ws.repo, gitio.common_dir(self.ws.repo) / "refs"))
        repo = self.ws.repo
        head = gitio.head_id(repo)
        if head is not None:
            gitio.rebuild_index(repo, head)   # a fresh index: no staged tricks, no skip-worktree bits
        # A ref or file name the agent chose may look like a key: what is reported never repeats one.
        self.notes = [scrub(note) for note in self.notes]
        self.messages = [scrub(message) for message in self.messages]
        return failure

    def _remove_locks(self) -> None:
        """Lock files git left in the git directory (`index.lock`, `HEAD.lock`, a branch's `.lock`): preflight
        refused any at the start and every process of the agent has ended, so each is the agent's leftover, made
        by a git it killed or by hand. Removed (never followed), so the runner can rebuild the index and put the
        references back; named in Evidence."""
        left = gitio.lock_files(self.ws.repo)
        for lock in left:
            gitstate.remove_path(lock.path)
        if left:
            note = "removed git lock files the agent left: " + ", ".join(lock.label for lock in left[:12]) + (
                " …" if len(left) > 12 else "")
            self.notes.append(note)
            self.messages.append(note)

    def _restore_files(self) -> None:
        caches = _caches()
        changes = self.files.restore(skip_aside=caches)
        # The agent's gitmem commands refresh the caches: putting a plain file back is routine, and said nowhere.
        # A cache the agent made a link, a directory or a FIFO, or one that could not be put back, is reported.
        routine = [c for c in changes if c.inside and _is_cache(c.label, caches) and c.found in ("file", "")
                   and c.what in ("added", "changed", "deleted")]
        noted = [c for c in changes if c not in routine]
        if not noted:
            return
        aside = self._keep_aside(noted)
        listing = ", ".join(f"{c.label} ({c.what})" for c in noted[:12]) + (" …" if len(noted) > 12 else "")
        where = f"; the agent's versions are kept in {aside}" if aside else ""
        note = f"restored git state the agent changed: {listing}{where}"
        self.notes.append(note)
        self.messages.append(note)

    def _keep_aside(self, changes: list[StateChange]) -> str | None:
        state = gitio.state_dir(self.ws.repo)
        folder = state / ASIDE_DIR / f"cycle-{self.cycle}"
        kept = False
        for change in changes:
            if change.aside is None:
                continue
            # named as held files are: `.git/gitmem/evil_test.py`'s copy would be a module pytest imports
            name = oversize.inert_name(change.label.replace("~", "home").strip("/").replace("/", "__"))
            try:
                folder.mkdir(parents=True, exist_ok=True)
                (folder / name).write_bytes(change.aside)
                kept = True
            except OSError:
                continue
        return f".git/gitmem/{ASIDE_DIR}/cycle-{self.cycle}/" if kept else None

    def _restore_refs(self, lost: set[str]) -> AgentError | None:
        """Put the references back, except those whose objects are `lost` (they cannot point at nothing)."""
        repo, before = self.ws.repo, {name: old for name, old in self.refs.items() if old not in lost}
        now = gitio.references_all(repo)
        mine = f"refs/heads/{self.branch}"
        failure: AgentError | None = None
        if now.get("HEAD") != f"ref: {mine}":
            where = (now.get("HEAD") or "nothing").removeprefix("ref: ").removeprefix("refs/heads/")
            failure = AgentError(f"the agent switched from {self.branch} to {where}")
            gitio.set_reference(repo, "HEAD", f"ref: {mine}")
            self.notes.append(f"switched HEAD back to {self.branch} (the agent had switched to {where})")
        tip = now.get(mine)
        if tip is None or tip.startswith("ref: ") or not gitio.has_object(repo, tip):
            gitio.set_reference(repo, mine, self.start)
            failure = failure or AgentError(f"the agent deleted branch {self.branch}")
            self.notes.append(f"recreated branch {self.branch} at {self.start[:10]}, which the agent deleted")
        elif tip != self.start and not gitio.is_ancestor(repo, self.start, tip):
            kept = self.keep_tip(tip)
            gitio.set_reference(repo, mine, self.start)
            failure = failure or AgentError(f"the agent moved {self.branch} off {self.start[:10]}")
            self.notes.append(f"put branch {self.branch} back at {self.start[:10]} (the agent had moved it to "
                              f"{tip[:10]}, kept on branch {kept})")
        stash = self.backup.stash
        made: list[str] = []         # references the agent created: kept
        for name in sorted(set(before) | set(now)):
            if name in ("HEAD", mine) or before.get(name) == now.get(name) or (name == gitio.STASH and stash):
                continue
            if name in self.refs and name not in before:
                continue          # its objects are lost: the failure says so, the ref stays as the agent left it
            if name not in before and name.startswith(KEPT_NEW) and not name.startswith(RUNNER_NAMESPACE):
                made.append(f"{name} ({now[name][:10]})")
                continue
            self._restore_ref(name, before.get(name), now.get(name))
        if made:      # one line however many (an agent can make tens of thousands)
            self.messages.append(f"the agent created {', '.join(made[:SHOWN_REFS])}"
                                 f"{f' and {len(made) - SHOWN_REFS} more' if len(made) > SHOWN_REFS else ''}; "
                                 f"{'they are' if len(made) > 1 else 'it is'} kept in this checkout, never pushed")
        if stash:
            self._restore_stash(stash, lost)
        return failure

    def _restore_stash(self, before: list[tuple[str, str]], lost: set[str]) -> None:
        """The stash list as it was (each entry is a reflog entry of refs/stash, not a ref of its own); the
        agent's own stashes on top of the human's are kept."""
        repo = self.ws.repo
        now = gitio.stash_entries(repo)
        ids = [oid for oid, _ in now]
        if ids[len(ids) - len(before):] == [oid for oid, _ in before] and len(ids) >= len(before):
            if len(ids) > len(before):
                self.messages.append(f"the agent stashed {len(ids) - len(before)} change(s); they are kept")
            return
        wanted = [(oid, message) for oid, message in before if oid not in lost]
        gitio.put_stash(repo, wanted)
        dropped = [oid[:10] for oid in ids if oid not in {o for o, _ in before}]
        extra = f"; the agent's own stash entries {', '.join(dropped)} were dropped" if dropped else ""
        self.notes.append(f"restored the stash list ({len(wanted)} entries), which the agent changed{extra}")

    def _restore_ref(self, name: str, old: str | None, new: str | None) -> None:
        repo = self.ws.repo
        if old is None:
            gitio.set_reference(repo, name, None)
            self.notes.append(f"removed {name}, which the agent created")
            return
        if new is not None and name.startswith("refs/heads/") and not new.startswith("ref: "):
            kept = self.keep_tip(new)
            self.notes.append(f"restored {name} at {old[:10]} (the agent had moved it; its tip is kept on {kept})")
        else:
            self.notes.append(f"restored {name}, which the agent {'deleted' if new is None else 'changed'}")
        gitio.set_reference(repo, name, old)

    def keep_tip(self, tip: str, remote: str | None = None) -> str:
        """Keep `tip` (commits made in the checkout during the cycle) on a free `gitmem/local/cycle-N` branch,
        never deleted; returns the branch's name."""
        from gitmem.publish.push import free_branch_name

        repo = self.ws.repo
        name = free_branch_name(repo, f"gitmem/local/cycle-{self.cycle}",
                                remote or gitio.upstream_of(repo, self.branch)[0])
        gitio.create_branch(repo, name, tip)
        return name

    # -- what may be committed ----------------------------------------------------------------------------------
    def was_ignored(self, path: str) -> bool:
        return any(path == item or (item.endswith("/") and path.startswith(item)) for item in self.ignored)

    def listed(self) -> tuple[list[str], list[oversize.Held]]:
        """`candidates`, and what was held to list them: libgit2's listing stops at a folder nested past what it
        lists, so when it fails such folders are held (gitmem.cycle.oversize `hold_too_deep`, judged under the
        human's ignore rules as `candidates` lists) and the tree is listed again. Only then is the tree walked.
        First, the files pytest runs by name that the agent made or changed where those rules ignore them are held
        (gitmem.cycle.oversize `hold_runnable`): no diff would show them. The rest are candidates, in the diff."""
        repo = self.ws.repo
        runnable, self.runnable = self.runnable, []       # held once, whichever of the runner and salvage lists
        if runnable:
            with self._human_rules():
                runnable = [rel for rel in runnable if self.was_ignored(rel) or gitio.path_ignored(repo, rel)]
        held = oversize.hold_runnable(self.ws, runnable, self.cycle)
        try:
            return self.candidates(), held
        except gitio.RepoError:
            with self._human_rules():
                held += oversize.hold_too_deep(self.ws, self.cycle,
                                               lambda rel: self.was_ignored(rel) or gitio.path_ignored(repo, rel))
            return self.candidates(), held

    @contextmanager
    def _human_rules(self) -> Iterator[dict[str, bytes | None]]:
        """The human's ignore rules in force (gitmem.cycle.ignore_rules); yields the ignore files the agent changed."""
        folders = tuple(item for item in self.ignored if item.endswith("/"))
        changed = ignore_rules.changed_ignore_files(self.ws.repo, self.ignore_files, folders)
        with ignore_rules.human_rules(self.ws.repo, changed):
            yield changed

    def candidates(self) -> list[str]:
        """The changed paths the runner may commit: dirty under the human's ignore rules, not the agent's
        (gitmem.cycle.ignore_rules), and not ignored when the cycle started; and the agent's ignore files."""
        repo = self.ws.repo
        with self._human_rules() as changed:
            dirty = gitio.dirty_files(repo)
            # A repository the agent made: git lists it as `sub/`, where libgit2 may leave it out or call it
            # ignored (a `.git` file naming a repository in an ignored folder): folders are skipped as ignored
            # only when they are no repository themselves.
            hidden = tuple(item for item in gitio.ignored(repo)
                           if item.endswith("/") and not oversize.is_repository(self.ws.root / item))
            made = oversize.nested_repositories(
                self.ws.root, lambda rel: self.was_ignored(rel) or rel.startswith(hidden)) - self.nested
        if made:          # a submodule of the start commit the agent checked out is the human's, not held
            start = gitio.commit_snapshot(repo, self.start, [rel.rstrip("/") for rel in made])
            made = {rel for rel in made if start is None or start.mode(rel.rstrip("/")) != GITLINK}
        return sorted({path for path, _ in dirty if not self.was_ignored(path)} | set(changed) | made)


def _with_nested(places: list[StatePath], nested: list[StatePath]) -> list[StatePath]:
    """`places`, and the nested repositories' (gitmem.gitio.nested_state) that are none of them by another name
    (a submodule's own `.git` folder in the tree is the repository's state already)."""
    known = {os.path.realpath(place.path) for place in places}
    return [*places, *(place for place in nested if os.path.realpath(place.path) not in known)]


def past_the_walk(bound: str) -> str:
    """The note for a walk for nested git directories that stopped at its bound (gitmem.gitio.nested). The cycle
    runs on, fail-open: the bound is a cost bound the agent can always reach (it writes the tree), so failing
    closed would let it stop every later cycle, and a project with a big `node_modules` would never run one. The
    human hears what was not done instead, in Evidence."""
    return (f"the walk for git directories in the work tree stopped at its bound ({bound}): a repository past it "
            "was neither guarded nor, in the box, shown without its credentials; keep no clone with a token there")


def _is_cache(label: str, caches: tuple[str, ...]) -> bool:
    """A cache file, its SQLite companions (`-wal`, `-shm`) or the temp file it is written through."""
    name = label.rsplit("/", 1)[-1]
    return label.rsplit("/", 2)[-2:-1] == ["gitmem"] and any(
        name in (c, f"{c}-wal", f"{c}-shm", f"{c}-journal") or (name.startswith(f".{c}.") and name.endswith(".tmp"))
        for c in caches)


def _inside(path: str, target: str) -> str | None:
    """A link's target as a path in the tree; None when it leaves the tree."""
    if posixpath.isabs(target):
        return None
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
    return None if joined.startswith("..") or joined == "." else joined


def _volume_dirs(ws: Workspace) -> list[str]:
    """Every workspace's sealed LOG volumes (gitmem.memory.volumes): only the runner writes them, at its commit;
    a volume never changes, and one the agent planted would be history no cycle wrote. The whole folder, so that
    no link or file takes its place; but where the project keeps files of its own in it (a `history/` folder of
    its own, from before rules 6) those stay the agent's to work on, and only the names of volumes are protected
    (every spelling a case-insensitive file system takes for one: the patterns fold case)."""
    logs = {paths["log"] for paths in ws.config.workspace_paths().values()}
    found = []
    for path in sorted(logs):
        folder = volumes.volume_folder(path)
        held = gitio.head_files_under(ws.repo, folder)
        own = len(volumes.named(path, held)) < len(held)
        found.append(f"/{volumes.volume_glob(path)}" if own else f"/{folder}/")
    return found


def _prompt_dirs(ws: Workspace) -> list[str]:
    """The prompts a workspace's memory_dir may hold (`prompts/` at the root is a default)."""
    found = [ws.config.memory_dir, *(w.memory_dir for _, w in ws.config.workspaces)]
    return [f"/{d.strip('/')}/prompts/" for d in found if d.strip("/") not in ("", ".")]
