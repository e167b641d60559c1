"""The git layer: the only package that imports pygit2 or runs the `git` executable.

Everything here takes a `Repo` handle and answers in plain types: paths, hex commit ids, names, and small
dataclasses of those (`Identity`, `Commit`, `CommitInfo`, `Snapshot`). No pygit2 object leaves this package.

  repository  opening a repository (GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE), identity, status, the state dir
  snapshots   memory files in a commit, the index or the work tree
  blobproof   big LOG/NOW blobs derived from a newer copy when their git id proves it
  history     revisions, ranges, ancestry, commits for recall
  commits     commits built without touching the user's index, branches, resets, restore
  rebase      replaying local commits onto an upstream, with a memory-aware resolver
  remote      fetch, push and the few commands that go through the `git` executable
"""
from __future__ import annotations

from gitmem.gitio.blobproof import derived
from gitmem.gitio.commits import (
    branch_exists,
    commit_files,
    commit_worktree,
    create_branch,
    reset_hard,
    reset_mixed,
    restore_worktree,
    switch_head,
    worktree_files,
    write_tree_with,
)
from gitmem.gitio.history import (
    Commit,
    CommitInfo,
    commit,
    commits_since,
    is_ancestor,
    is_ancestor_id,
    merge_base,
    resolve,
    walk_range,
)
from gitmem.gitio.rebase import RebaseResult, Resolver, rebase_onto
from gitmem.gitio.remote import (
    GitCommandError,
    checkout_branch,
    fetch,
    fetch_prefixed,
    push,
    remote_branch_oid,
    remote_names,
    run_git,
    set_config,
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
from gitmem.gitio.snapshots import (
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

__all__ = [
    "Commit", "CommitInfo", "GitCommandError", "Identity", "RebaseResult", "Repo", "RepoError", "Resolver",
    "Snapshot", "blob_size", "branch_exists", "checkout_branch", "commit", "commit_files", "commit_snapshot",
    "commit_worktree", "commits_since", "config_value", "create_branch", "current_branch", "derived",
    "dirty_files", "fetch", "fetch_prefixed", "file_at", "file_id_at", "git_dir", "head_id", "index_snapshot",
    "init_repo", "is_ancestor", "is_ancestor_id", "is_unborn", "merge_base", "open_repo", "push",
    "rebase_onto", "references", "remote_branch_oid", "remote_names", "reset_hard", "reset_mixed", "resolve",
    "restore_worktree", "root", "run_git", "same_blob", "set_config", "staged_snapshot", "state_dir",
    "state_dir_of", "switch_head", "upstream_of", "user_identity", "walk_range", "work_tree",
    "worktree_files", "worktree_snapshot", "write_tree_with",
]
