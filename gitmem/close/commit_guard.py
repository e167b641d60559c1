"""What the close may change, checked before its one commit; and how to put things back if it may not.

The close may add proven rules and retire them with a reason. Everything a cycle may not do (resolve or
rewrite decisions, rewrite LOG, delete lessons) it may not do either; the GM checks run over the whole
change as `gitmem check --worktree` would, with the agent identity as author (GM207).
"""
from __future__ import annotations

import os
import re

from gitmem import codes, gitio
from gitmem.checks import CheckInput, run_checks, volume_checks
from gitmem.checks.check_and_verify import derived_commit
from gitmem.checks.log_checks import judged_append
from gitmem.codes import Code
from gitmem.confined import files
from gitmem.errors import ExitCode, RunFailure
from gitmem.gitio import Listing, Snapshot
from gitmem.memory import lessons, rules
from gitmem.memory.decoding import decode_file_text
from gitmem.memory_writer import MemoryWriter
from gitmem.workspace import Workspace


class CloseError(RunFailure):
    """The close refused or failed; nothing was committed. `exit_code` says which. `where` and `line`: what it is
    about, as the cycle's refusals name it (docs/format.md, "Diagnostics")."""

    def __init__(self, message: str, *, where: str, line: int = 1, code: Code = codes.CLOSE_REFUSED,
                 dirty: bool = False, usage: bool = False) -> None:
        super().__init__(message, code=code, where=where, line=line)
        self.exit_code = ExitCode.DIRTY if dirty else ExitCode.USAGE if usage else ExitCode.VIOLATIONS


def changed_files(ws: Workspace, head: str) -> dict[str, bytes | None]:
    """Memory files whose work-tree bytes differ from HEAD (the close started from a clean tree)."""
    return changed_with_stats(ws, head)[0]


def changed_with_stats(ws: Workspace, head: str) -> tuple[dict[str, bytes | None], dict[str, os.stat_result]]:
    """`changed_files`, and the stat each changed file's bytes were read with (for the commit's index entries:
    `gitio.commit_files`). HEAD's blobs are never read: a blob of another size differs, and one of the same size
    is compared by its id (at 100x HEAD's LOG is 75 MB, inflated in a second)."""
    changed: dict[str, bytes | None] = {}
    stats: dict[str, os.stat_result] = {}
    for path in ws.config.memory_paths().values():
        found = files.read_with_stat(ws.root, path)
        data = found[0] if found is not None else None
        if not _same_blob(ws.repo, gitio.file_id_at(ws.repo, head, path), data):
            changed[path] = data
            if found is not None and found[1] is not None:
                stats[path] = found[1]
    return changed, stats


def _same_blob(repo: gitio.Repo, blob: str | None, data: bytes | None) -> bool:
    if blob is None or data is None:
        return blob is None and data is None
    return gitio.blob_size(repo, blob) == len(data) and gitio.blob_id(data) == blob


def restore(ws: Workspace, head: str, changed: dict[str, bytes | None]) -> None:
    for path in changed:
        data = gitio.file_at(ws.repo, head, path)
        if data is None:
            files.remove_file(ws.root, path)
        else:
            files.write_bytes(ws.root, path, data)


def first_place(problems: list[str]) -> tuple[str, int]:
    """(path, line) of the first of `check_result`'s problems, each written `path:line: …`."""
    found = re.match(r"^(.+?):([0-9]+): ", problems[0])
    return (found.group(1), int(found.group(2))) if found else (problems[0].split(":", 1)[0], 1)


def check_result(ws: Workspace, head: str, changed: dict[str, bytes | None]) -> list[str]:
    """`path:line: GMnnn message` for every error in the change, plus the close's permission problems."""
    from gitmem.cycle import permissions

    config = ws.config
    paths = list(config.memory_paths().values())
    tree = gitio.worktree_snapshot(ws.root, repo=ws.repo)
    # The changed files as `changed` holds them: the bytes the commit will hold, read once (the 75 MB LOG and
    # 10 MB NOW at 100x, which the close has just written and nothing else may write under its lock).
    new = Snapshot(tree.label, lambda rel: changed[rel] if rel in changed else tree.read(rel), tree.oid, tree.mode,
                   lambda folder: _listed(old, tree, changed, folder))
    old = derived_commit(ws.repo, head, paths, new.read)
    judged = CheckInput(config, old, new, config.agent.email)
    # Only the files the close changed: a problem already committed before the close is not the close's
    # to fix (and a write to that file would have been refused by its own validation anyway).
    found = [f"{v.path}:{v.line}: {v.code} {v.message}"
             for v in run_checks(judged) if v.is_error and v.path in changed]

    def text(snapshot: Snapshot | None, role: str) -> str | None:
        data = snapshot.read(config.path(role)) if snapshot is not None else None
        return decode_file_text(data) if data is not None else None

    # Rules are the close's to change, so they are left out of the cycle's permission check. LOG is judged as
    # bytes first: an append there, as `check` judges it, is what the permission asks (75 MB decoded twice
    # at 100x otherwise); anything else is judged on the texts as the cycle's is.
    roles = ["decisions", "lessons"]
    if not _log_appended(judged, config.path("log")):
        roles.append("log")
    enforced = permissions.enforce({r: text(old, r) for r in roles}, {r: text(new, r) for r in roles}, promotes=True)
    found += [f"{config.path('log')}:1: close permission: {note}" for note in enforced.notes]
    found += rule_changes(config.path("rules"), text(old, "rules") or "", text(new, "rules") or "")
    found += lesson_changes(config.path("lessons"), text(old, "lessons") or "", text(new, "lessons") or "")
    return found


def _listed(head: Snapshot | None, tree: Snapshot, changed: dict[str, bytes | None], folder: str) -> Listing | None:
    """What the commit's folder will hold: HEAD's, with the files the close changes there (a seal's volumes). The
    commit holds nothing else of the work tree, and HEAD's listing comes from git's objects, where the work
    tree's took a stat of each of LOG's 270 volumes (100x)."""
    base = head.entries_in(folder) if head is not None else tree.entries_in(folder)
    inside = {rel: data for rel, data in changed.items() if os.path.dirname(rel) == folder.strip("/")}
    if base is None or not inside:
        return base
    listing = dict(base)
    for rel, data in inside.items():
        if data is None:
            listing.pop(rel, None)
        else:
            listing[rel] = (None, files.REGULAR)
    return listing


def _log_appended(judged: CheckInput, path: str) -> bool:
    """Whether the new LOG is the old one with entries appended: the checks' own judgement (`judged_append`),
    taken from them when they just made it. When the change seals (rules 6), the old LOG is what the seal's
    volumes prove it leaves (`volume_checks.proven_base`)."""
    old, new = judged.old, judged.new
    new_log = new.read(path)
    if old is None or new_log is None:
        return False
    base = volume_checks.proven_base(judged)
    if base is not None:
        old = old.with_file(path, base, seen_as="sealed")
    return judged_append(old, path, new_log)[1].ok


def rule_changes(path: str, before: str, after: str) -> list[str]:
    """Allowed: new learned rules, and proven rules moved to Retired with a reason. Nothing else."""
    old, new = rules.parse(before), rules.parse(after)
    added = {r.id for r in new.all} - {r.id for r in old.all}
    found: list[str] = []
    for item in old.all:
        now = new.find(item.id)
        if now is not None and now.content() == item.content():
            continue
        moved = (item.section == rules.PROVEN and now is not None and now.section == rules.RETIRED
                 and now.text == item.text and (now.superseded_by in added or now.provenance.startswith("retired")))
        if not moved:
            found.append(f"{path}:{now.line if now else 1}: close permission: {item.id} was changed or removed")
    for item in new.all:
        if item.id in added and (item.section != rules.PROVEN or item.lesson is None):
            found.append(f"{path}:{item.line}: close permission: {item.id} is new but not a learned proven rule")
    return found


def lesson_changes(path: str, before: str, after: str) -> list[str]:
    """A lesson may gain `Status: promoted R-NN`; its other lines stay as written."""
    new = lessons.parse(after)
    found: list[str] = []
    for item in lessons.parse(before).lessons:
        now = new.find(item.id)
        if now is None:
            continue    # a deletion is reported by the permission check above
        if now.body == item.body:
            continue    # as written, line for line (3,000 lessons at 100x, a few of them promoted)
        keep = [line for line in item.body if line.strip() and not line.startswith("- Status:")]
        if keep != [line for line in now.body if line.strip() and not line.startswith("- Status:")]:
            found.append(f"{path}:{now.line}: close permission: {item.id} was edited beyond its Status")
    return found


def write_together(memory: MemoryWriter, texts: dict[str, str]) -> str | None:
    """Validate several memory files as one change, then write them; the refusal text, or None when written."""
    proposed = {memory.config.path(role): text.encode("utf-8") for role, text in texts.items()}
    read: dict[str, bytes | None] = {}

    def current(rel: str) -> bytes | None:
        # Each file read once for both sides: the files left as they are (LOG is 75 MB at 100x) are the same
        # bytes on both, told apart by no second read and no compare.
        if rel not in read:
            read[rel] = files.read_bytes(memory.root, rel)
        return read[rel]

    before = Snapshot("current", current)
    after = Snapshot("proposed", lambda rel: proposed[rel] if rel in proposed else current(rel))
    errors = [v for v in run_checks(CheckInput(memory.config, before, after, memory.author_email))
              if v.is_error and v.path in proposed]
    if errors:
        return "; ".join(f"{v.path}:{v.line}: {v.code} {v.message}" for v in errors)
    for rel, data in proposed.items():
        files.write_bytes(memory.root, rel, data)
    return None
