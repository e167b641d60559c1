"""The git layer: the only package that imports pygit2 or runs the `git` executable.

Everything here takes a `Repo` handle and answers in plain types: paths, hex commit ids, names, and small
dataclasses of those (`Identity`, `Commit`, `CommitInfo`, `Snapshot`). No pygit2 object leaves this package.

  repository  opening a repository (GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE), identity, status, the state dir
  snapshots   memory files in a commit, the index or the work tree
  restore     chosen work-tree paths put back as HEAD has them, never through a planted link
  state       the git state a cycle guards: config, hooks, ignore files, references
  nested      the git directories inside a work tree, found by a bounded walk
  nested_state  the git state of those git directories: what the cycle's guard watches in each
  bounded_read  a file the agent may have written, read at a bounded cost (regular files, non-blocking, a bound)
  index_view  a copy of the index that takes chosen tracked files as unchanged (the box's stripped configs)
  staged      every file a commit of the index or the work tree would change, with its mode
  blobproof   big LOG/NOW blobs derived from a newer copy when their git id proves it
  history     revisions, ranges, ancestry, commits for recall
  commits     commits built without touching the user's index, branches, resets, restore
  rebase      replaying local commits onto an upstream, with a memory-aware resolver
  remote      fetch, push and the few commands that go through the `git` executable
  ssh_signatures  whether a commit carries an SSH signature by a listed key
  bundles     the human's unpushed history in a bundle, and the stash list, for the cycle's guard
  readonly    read-only copies of other repositories, fetched into a cache (`gitmem fleet`)
"""
from __future__ import annotations

import functools
import importlib
import inspect
from typing import TYPE_CHECKING, Any

# The git layer's public names, each written once. Callers use them as `gitio.NAME`; the module that defines
# a name is found on first use (below), so this list is the whole facade.
__all__ = [
    "Change", "ChangedFile", "Commit", "CommitInfo", "GitCommandError", "Identity", "LISTED_DEPTH", "Listing",
    "BranchNotMoved", "MAX_CONFIG_BYTES", "RebaseResult", "RenamedSnapshot", "Repo", "RepoError", "Resolver", "STASH",
    "Snapshot",
    "NestedWalk", "StatePath", "blob",
    "blob_id",
    "blob_size", "branch_exists", "cache_home", "changes", "checkout_branch", "commit", "commit_files",
    "commit_snapshot", "commit_worktree", "committed_files", "commits_since", "common_dir", "config_entries",
    "config_files", "config_files_in_tree", "config_value",
    "copy_branch", "copy_turn",
    "count_range",
    "create_branch", "create_bundle", "current_branch", "derived", "dirty_files", "exists", "fetch", "fetch_copy",
    "fetch_objects", "fetch_prefixed", "file_at", "file_current", "file_id_at", "forget_cached", "git_dir",
    "has_object",
    "head_entry", "head_files_under", "head_id", "head_off", "history", "hooks_dir", "ignored",
    "index_assuming_unchanged",
    "index_snapshot", "init_repo",
    "is_ancestor",
    "is_ancestor_id", "is_branch_name", "is_memory_branch", "is_unborn", "MEMORY_BRANCH", "last_fetch_failed",
    "newest_successor",
    "is_phase_commit", "last_phase_commit",
    "lock_files", "merge_base", "move_branch", "nested_state_paths", "nested_walk",
    "open_repo", "path_ignored", "pinned_walk", "push",
    "put_stash",
    "read_staged", "rebase_onto", "ref_path",
    "rebuild_index", "references", "references_all", "refused_for_good", "regular_stat", "remote_branch_oid",
    "remote_names",
    "remote_tips", "reset_hard", "reset_mixed", "resolve_revision", "restore_paths", "restore_worktree", "root",
    "run_git",
    "same_blob", "set_config", "set_reference", "set_remote_branch", "shallow_commits", "shown_path", "signature",
    "staged_files",
    "staged_snapshot", "stash_entries", "state_dir", "state_dir_of", "state_paths", "stored_bytes", "successor_number",
    "switch_head",
    "token_config",
    "tracked_named",
    "tree_files_named", "tree_links", "unbundle", "unchanged_tracked", "unheld", "unmerged", "unsigned_why",
    "upstream_of", "user_identity",
    "waiting_branches", "walk_range", "work_tree", "worktree_bytes", "worktree_changed", "worktree_files",
    "worktree_snapshot", "write_tree_with",
    # Two writers (gitmem.gitio.rebase, remote): replaying and merging by memory's renumbering rule.
    "Changes", "Joiner", "Joining", "Leaver", "Leaving", "Renumberer", "Renumbering", "TreeFiles", "merge_file_markers",
    "merge_in_progress", "merge_into", "replay",
]

# Submodules load on first use (PEP 562), searched in this order: `gitmem check` finds everything it needs in
# the first four (the repository, snapshots, the staged files, blob ids) and never loads history, commits,
# remotes or rebases; every millisecond counts on the pre-commit path.
_SEARCH_ORDER = ("repository", "snapshots", "staged", "blobproof", "history", "state", "restore", "commits",
                 "remote", "rebase", "bundles", "ssh_signatures", "readonly", "nested", "nested_state", "index_view",
                 "bounded_read")


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'gitmem.gitio' has no attribute {name!r}")
    for module_name in _SEARCH_ORDER:
        module = importlib.import_module(f"gitmem.gitio.{module_name}")
        if name in vars(module):
            value = _translating(vars(module)[name])
            globals()[name] = value
            return value
    raise AttributeError(f"gitmem.gitio lists {name!r} but no submodule defines it")   # a bug: see test_gitio


def _translating(value: Any) -> Any:
    """A function of the layer, with git's own errors (a damaged index, a missing object: pygit2.GitError)
    turned into RepoError: one line that names the file and the fix, exit 2. Anything else passes through
    untouched, so a bug stays a bug. Classes and constants are returned as they are."""
    if not inspect.isfunction(value):
        return value
    import pygit2  # loaded already: the submodule that defines `value` imports it

    from gitmem.gitio.repository import explained

    @functools.wraps(value)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return value(*args, **kwargs)
        except pygit2.GitError as err:
            found = explained(err)
            if found is None:
                raise
            raise found from None

    return call


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


if TYPE_CHECKING:   # for type checkers: every submodule's names, of which `__all__` exports the public ones
    from gitmem.gitio.blobproof import *
    from gitmem.gitio.bounded_read import *
    from gitmem.gitio.bundles import *
    from gitmem.gitio.commits import *
    from gitmem.gitio.history import *
    from gitmem.gitio.index_view import *
    from gitmem.gitio.nested import *
    from gitmem.gitio.nested_state import *
    from gitmem.gitio.readonly import *
    from gitmem.gitio.rebase import *
    from gitmem.gitio.remote import *
    from gitmem.gitio.repository import *
    from gitmem.gitio.restore import *
    from gitmem.gitio.snapshots import *
    from gitmem.gitio.ssh_signatures import *
    from gitmem.gitio.staged import *
    from gitmem.gitio.state import *
