"""The git layer: the only package that imports pygit2 or runs the `git` executable.

Everything here takes a `Repo` handle and answers in plain types: paths, hex commit ids, names, and small
dataclasses of those (`Identity`, `Commit`, `CommitInfo`, `Snapshot`). No pygit2 object leaves this package.

  repository  opening a repository (GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE), identity, status, the state dir
  snapshots   memory files in a commit, the index or the work tree
  restore     chosen work-tree paths put back as HEAD has them, never through a planted link
  state       the git state a cycle guards: config, hooks, ignore files, references
  staged      every file a commit of the index or the work tree would change, with its mode
  blobproof   big LOG/NOW blobs derived from a newer copy when their git id proves it
  history     revisions, ranges, ancestry, commits for recall
  commits     commits built without touching the user's index, branches, resets, restore
  rebase      replaying local commits onto an upstream, with a memory-aware resolver
  remote      fetch, push and the few commands that go through the `git` executable
"""
from __future__ import annotations

import functools
import importlib
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

# Submodules load on first use (PEP 562): `gitmem check` needs the repository, snapshots and history,
# never remotes, rebases or commits, and every millisecond counts on the pre-commit path.
_NAMES = {
    "blobproof": ("blob_id", "derived"),
    "commits": ("branch_exists", "commit_files", "commit_worktree", "create_branch",
                "rebuild_index", "reset_hard", "reset_mixed", "restore_worktree", "switch_head", "worktree_files",
                "write_tree_with"),
    "history": ("Change", "Commit", "CommitInfo", "blob", "changes", "commit", "commits_since", "count_range",
                "exists", "history", "is_ancestor", "is_ancestor_id", "merge_base", "remote_tips", "resolve",
                "shallow_commits", "signature", "walk_range"),
    "rebase": ("RebaseResult", "Resolver", "rebase_onto"),
    "remote": ("GitCommandError", "checkout_branch", "fetch", "fetch_prefixed", "hooks_dir", "push",
               "remote_branch_oid", "remote_names", "run_git", "set_config", "set_remote_branch", "token_config",
               "upstream_of"),
    "repository": ("Identity", "Repo", "RepoError", "config_value", "current_branch", "dirty_files", "git_dir",
                   "head_id", "init_repo", "is_unborn", "open_repo", "references", "root", "state_dir",
                   "state_dir_of", "user_identity", "work_tree"),
    "restore": ("head_entry", "restore_paths"),
    "state": ("StatePath", "common_dir", "has_object", "ignored", "references_all", "set_reference",
              "state_paths", "tree_links"),
    "staged": ("ChangedFile", "read_staged", "staged_files", "worktree_bytes", "worktree_changed"),
    "snapshots": ("RenamedSnapshot", "Snapshot", "blob_size", "commit_snapshot", "file_at", "file_id_at",
                  "index_snapshot",
                  "same_blob", "staged_snapshot", "worktree_snapshot"),
}
_WHERE = {name: module for module, names in _NAMES.items() for name in names}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'gitmem.gitio' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"gitmem.gitio.{module}"), name)
    if inspect.isfunction(value):
        value = _translating(value)
    globals()[name] = value
    return value


def _translating(func: Callable[..., Any]) -> Callable[..., Any]:
    """`func` with git's own errors (a damaged index, a missing object) turned into RepoError: one line that
    names the file and the fix, exit 2. Anything else passes through untouched: a bug stays a bug."""
    @functools.wraps(func)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except Exception as err:
            from gitmem.gitio.repository import explained

            found = explained(err)
            if found is None:
                raise
            raise found from None

    return call


def __dir__() -> list[str]:
    return sorted([*globals(), *_WHERE])


if TYPE_CHECKING:   # for type checkers: the same names, imported eagerly
    from gitmem.gitio.blobproof import blob_id, derived
    from gitmem.gitio.commits import (
        branch_exists,
        commit_files,
        commit_worktree,
        create_branch,
        rebuild_index,
        reset_hard,
        reset_mixed,
        restore_worktree,
        switch_head,
        worktree_files,
        write_tree_with,
    )
    from gitmem.gitio.history import (
        Change,
        Commit,
        CommitInfo,
        blob,
        changes,
        commit,
        commits_since,
        count_range,
        exists,
        history,
        is_ancestor,
        is_ancestor_id,
        merge_base,
        remote_tips,
        resolve,
        shallow_commits,
        signature,
        walk_range,
    )
    from gitmem.gitio.rebase import RebaseResult, Resolver, rebase_onto
    from gitmem.gitio.remote import (
        GitCommandError,
        checkout_branch,
        fetch,
        fetch_prefixed,
        hooks_dir,
        push,
        remote_branch_oid,
        remote_names,
        run_git,
        set_config,
        set_remote_branch,
        token_config,
        upstream_of,
    )
    from gitmem.gitio.repository import (
        Identity,
        Repo,
        RepoError,
        config_value,
        current_branch,
        dirty_files,
        git_dir,
        head_id,
        init_repo,
        is_unborn,
        open_repo,
        references,
        root,
        state_dir,
        state_dir_of,
        user_identity,
        work_tree,
    )
    from gitmem.gitio.restore import head_entry, restore_paths
    from gitmem.gitio.snapshots import (
        RenamedSnapshot,
        Snapshot,
        blob_size,
        commit_snapshot,
        file_at,
        file_id_at,
        index_snapshot,
        same_blob,
        staged_snapshot,
        worktree_snapshot,
    )
    from gitmem.gitio.staged import ChangedFile, read_staged, staged_files, worktree_bytes, worktree_changed
    from gitmem.gitio.state import (
        StatePath,
        common_dir,
        has_object,
        ignored,
        references_all,
        set_reference,
        state_paths,
        tree_links,
    )

__all__ = sorted(_WHERE)
