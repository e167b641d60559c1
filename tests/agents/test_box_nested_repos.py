"""The box shows every git directory inside the work tree without the credentials in its config, not only the
ones the repository's config names (gitmem.gitio.nested, gitmem.agents.box_git_config): a clone kept in the
project that is no submodule, a bare repository, where a `.git` file leads, a linked tree's folder and a
nested clone's own submodules. Run in the real bwrap, over real repositories."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gitmem import gitio
from gitmem.agents import box_git_config
from gitmem.gitio import nested, state
from tests.agents.test_box_git_config import HEADER, HEADER_TOKEN, TOKEN, _boxed, needs_bwrap
from tests.support.gitcli import git
from tests.support.helpers import GitRepo

NESTED_SECRETS = (TOKEN, HEADER_TOKEN, HEADER.split()[-1])


def _clone(top: Path, tmp_path: Path, rel: str) -> Path:
    """A repository cloned into `rel` of the work tree `top` (no submodule: no index or config names it), its
    remote's URL holding a token and its config an extraheader, as a human's `git clone` with a token leaves it."""
    source = tmp_path / f"{rel.replace('/', '-')}-source"
    source.mkdir(parents=True)
    git(source, "init", "-q", "-b", "main")
    (source / "code.txt").write_text("library code\n", encoding="utf-8")
    git(source, "add", "code.txt")
    git(source, "commit", "-q", "-m", "library")
    place = top / rel
    git(top, "clone", "-q", str(source), str(place))
    git(place, "config", "remote.origin.url", f"https://x-access-token:{TOKEN}@github.com/acme/lib.git")
    git(place, "config", "http.https://github.com/.extraHeader", HEADER)
    return place


def _said(done_stdout: str, done_stderr: str) -> list[str]:
    return [secret for secret in NESTED_SECRETS if secret in done_stdout + done_stderr]


@needs_bwrap
def test_a_clone_kept_in_the_work_tree_is_shown_without_credentials(memrepo: GitRepo, tmp_path: Path) -> None:
    """`vendor/lib` is a clone no config names (not a submodule), `build/tool` one the ignore rules hide: the
    box showed their configs as they are, token and extraheader and all. git status inside says what it says
    outside (the clone untracked, nothing modified), and git works inside the clone."""
    lib = _clone(memrepo.path, tmp_path, "vendor/lib")
    tool = _clone(memrepo.path, tmp_path, "build/tool")
    (memrepo.path / ".git" / "info" / "exclude").write_text("build/\n", encoding="utf-8")
    before = {path: path.read_bytes() for path in (lib / ".git" / "config", tool / ".git" / "config")}
    done = _boxed(memrepo, "cat vendor/lib/.git/config build/tool/.git/config; "
                           "git -C vendor/lib config --list --show-origin; git -C build/tool remote get-url origin; "
                           "echo ---; git status --porcelain; echo ---; git -C vendor/lib status --porcelain; "
                           "git -C vendor/lib log --format=%s -1")
    assert done.returncode == 0, done.stderr
    assert _said(done.stdout, done.stderr) == []
    assert "https://github.com/acme/lib.git\n" in done.stdout and "remote.origin.fetch=" in done.stdout
    _, status, rest = done.stdout.split("---\n")
    assert status == git(memrepo.path, "status", "--porcelain") == "?? vendor/\n"
    assert rest == "library\n"                  # the clone's own status is clean, its log read
    assert {path: path.read_bytes() for path in before} == before


@needs_bwrap
def test_where_a_git_file_leads_a_bare_repository_and_a_clones_own_modules_and_worktrees_are_stripped(
        memrepo: GitRepo, tmp_path: Path) -> None:
    """Every other shape a git directory takes in a tree: a `.git` file's `gitdir:` (a linked tree of the
    clone, whose folder holds a config.worktree, and whose common directory is the clone's), a bare repository,
    and a submodule's git directory under the clone's own `.git/modules/`."""
    lib = _clone(memrepo.path, tmp_path, "vendor/lib")
    git(lib, "config", "extensions.worktreeConfig", "true")
    git(lib, "worktree", "add", "-q", "-b", "side", "../lib-side")
    side = memrepo.path / "vendor" / "lib-side"
    git(side, "config", "--worktree", "http.extraheader", HEADER)
    bare = memrepo.path / "backups" / "agent.git"
    git(memrepo.path, "init", "-q", "--bare", str(bare))
    git(bare, "config", "remote.mirror.url", f"https://{TOKEN}@gitlab.com/acme/agent.git")
    module = lib / ".git" / "modules" / "deps" / "inner"
    git(memrepo.path, "init", "-q", "--bare", str(module))
    git(module, "config", "remote.origin.url", f"https://x-access-token:{TOKEN}@github.com/acme/inner.git")
    files = [lib / ".git" / "worktrees" / "lib-side" / "config.worktree", bare / "config", module / "config"]
    before = {path: path.read_bytes() for path in files}
    shown = " ".join(str(path.relative_to(memrepo.path)) for path in files)
    done = _boxed(memrepo, f"cat {shown}; git -C vendor/lib-side config --list; "
                           "git -C vendor/lib-side status --porcelain; git -C backups/agent.git remote get-url mirror")
    assert done.returncode == 0, done.stderr
    assert _said(done.stdout, done.stderr) == []
    assert "https://gitlab.com/acme/agent.git\n" in done.stdout and "https://github.com/acme/inner.git" in done.stdout
    assert "remote.origin.url=https://github.com/acme/lib.git" in done.stdout     # the common config, through it
    assert {path: path.read_bytes() for path in files} == before


def test_a_git_file_leading_out_of_the_tree_is_left_to_what_the_box_shows(memrepo: GitRepo, tmp_path: Path) -> None:
    """A `.git` file may lead anywhere (the agent writes the tree): its git directory is named, and only one the
    box shows gets a copy, as every other config file (the host's other repositories are not bound at all)."""
    elsewhere = tmp_path / "elsewhere.git"
    git(tmp_path, "init", "-q", "--bare", str(elsewhere))
    git(elsewhere, "config", "remote.origin.url", f"https://x-access-token:{TOKEN}@github.com/acme/else.git")
    (memrepo.path / "pointer").mkdir()
    (memrepo.path / "pointer" / ".git").write_text(f"gitdir: {elsewhere}\n", encoding="utf-8")
    repo = memrepo.ws().repo
    assert elsewhere / "config" in gitio.config_files_in_tree(repo)
    tree = str(memrepo.path.resolve())
    assert box_git_config.shown_copies(repo, lambda path: path.startswith(tree)) == ()
    copies = box_git_config.shown_copies(repo, lambda path: True)
    ours = str(tmp_path.resolve())
    assert [original for _copy, original in copies if original.startswith(ours)] == [str(elsewhere / "config")]


def test_the_walk_is_bounded_and_never_waits_on_a_fifo(memrepo: GitRepo, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The tree's shape is the agent's: a `.git` that is a FIFO is passed over (reading it would hold the
    runner), a `.git` link is followed to its folder, and the walk stops at its bounds (deep, many)."""
    (memrepo.path / "fifo").mkdir()
    os.mkfifo(memrepo.path / "fifo" / ".git")
    shallow = _clone(memrepo.path, tmp_path, "a/shallow")
    deep = _clone(memrepo.path, tmp_path, "a/b/c/d/deep")
    (memrepo.path / "linked").mkdir()
    (memrepo.path / "linked" / ".git").symlink_to(shallow / ".git")
    found = nested.git_dirs_in(memrepo.path)
    top = memrepo.path.resolve()
    assert {top / ".git", shallow.resolve() / ".git", deep.resolve() / ".git"} <= set(found)
    monkeypatch.setattr(nested, "MAX_WALK_DEPTH", 3)
    found = nested.git_dirs_in(memrepo.path)
    assert shallow.resolve() / ".git" in found and deep.resolve() / ".git" not in found
    monkeypatch.setattr(nested, "MAX_GIT_DIRS", 1)
    assert len(nested.git_dirs_in(memrepo.path)) == 1
    monkeypatch.setattr(nested, "MAX_GIT_DIRS", 256)
    monkeypatch.setattr(state, "MAX_TREE_CONFIGS", 2)
    assert len(gitio.config_files_in_tree(memrepo.ws().repo)) == 2


def test_a_config_in_the_tree_that_includes_without_end_costs_a_bounded_read(memrepo: GitRepo, tmp_path: Path) -> None:
    """A nested repository's config is the agent's to write: 100,000 includes, each one naming more, are
    followed to MAX_TREE_CONFIGS files in all, not to the end."""
    shallow = _clone(memrepo.path, tmp_path, "a/shallow")
    with (shallow / ".git" / "config").open("a", encoding="utf-8") as handle:
        handle.write("[include]\n" + "".join(f"\tpath = more{number}.inc\n" for number in range(100_000)))
    (shallow / ".git" / "more0.inc").write_text("[include]\n\tpath = more0.inc\n\tpath = more1.inc\n",
                                               encoding="utf-8")
    found = gitio.config_files_in_tree(memrepo.ws().repo)
    assert len(found) == state.MAX_TREE_CONFIGS and shallow / ".git" / "more0.inc" in found


def test_a_clone_near_the_top_is_found_however_vast_the_folder_beside_it(memrepo: GitRepo, tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The walk stops at its bounds; going breadth first, it has seen what lies near the top by then: a
    `node_modules` of more entries than the bound does not hide `vendor/lib`, whichever the folder lists first."""
    lib = _clone(memrepo.path, tmp_path, "vendor/lib")
    for number in range(20):
        folder = memrepo.path / "node_modules" / f"pkg{number}" / "lib"
        folder.mkdir(parents=True)
        for item in range(20):
            (folder / f"f{item}.js").write_bytes(b"")
    monkeypatch.setattr(nested, "MAX_WALK_ENTRIES", 200)
    assert lib.resolve() / ".git" in nested.git_dirs_in(memrepo.path)


def test_a_folder_that_looks_like_a_git_directory_hides_no_repository_below_it(memrepo: GitRepo,
                                                                              tmp_path: Path) -> None:
    """A `HEAD` and an `objects/` are all it takes to look like a git directory, and the agent can make them
    anywhere: at the top of the tree and in `vendor/` they hid `vendor/lib/.git` (the walk entered only such a
    folder's `modules/` and `worktrees/`), whose config was then shown with its token. Only git's own folders
    there (objects, refs, logs) are skipped."""
    lib = _clone(memrepo.path, tmp_path, "vendor/lib")
    for folder in (memrepo.path, memrepo.path / "vendor"):
        (folder / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
        (folder / "objects").mkdir()
    repo = memrepo.ws().repo
    assert lib.resolve() / ".git" in nested.git_dirs_in(memrepo.path)
    tree = str(memrepo.path.resolve())
    copies = dict((original, copy) for copy, original in box_git_config.shown_copies(
        repo, lambda path: path.startswith(tree)))
    shown = Path(copies[str(lib.resolve() / ".git" / "config")]).read_text(encoding="utf-8")
    assert TOKEN not in shown and HEADER_TOKEN not in shown and "https://github.com/acme/lib.git" in shown


def test_a_projects_logs_folder_beside_a_head_and_objects_is_walked(memrepo: GitRepo, tmp_path: Path) -> None:
    """The reviewer's case: `touch HEAD; mkdir objects; git init logs/lib` at the top of the tree, the clone's
    remote URL holding a token. The top then looked like a git directory, the walk skipped its `logs/` as git's
    own, and `logs/lib`'s config was shown with the token. git's own folders are skipped only in a git directory
    the walk has reason to trust (a `.git`, and the submodules' and linked trees' folders in one)."""
    (memrepo.path / "HEAD").write_bytes(b"")
    (memrepo.path / "objects").mkdir()
    lib = _clone(memrepo.path, tmp_path, "logs/lib")
    submodule = memrepo.path / ".git" / "modules" / "sub"
    git(memrepo.path, "init", "-q", "--bare", str(submodule))
    kept = memrepo.path / ".git" / "refs" / "kept"
    git(memrepo.path, "init", "-q", "--bare", str(kept))
    git(memrepo.path, "init", "-q", "--bare", str(submodule / "logs" / "kept"))
    found = nested.git_dirs_in(memrepo.path)
    assert {memrepo.path.resolve() / ".git", lib.resolve() / ".git", submodule.resolve()} <= set(found)
    assert kept.resolve() not in found and (submodule / "logs" / "kept").resolve() not in found
    shown = Path(_copies(memrepo)[str(lib.resolve() / ".git" / "config")]).read_text(encoding="utf-8")
    assert TOKEN not in shown and HEADER_TOKEN not in shown and "https://github.com/acme/lib.git" in shown


def test_folders_that_only_look_like_git_directories_use_none_of_the_budget(memrepo: GitRepo, tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Twenty folders with a `HEAD` and an `objects/` near the top, found before `vendor/lib` (breadth first),
    used up a budget of four git directories, and the clone with its token was never seen: one without a config
    file holds nothing to strip, and is not counted."""
    lib = _clone(memrepo.path, tmp_path, "vendor/lib")
    for number in range(20):
        fake = memrepo.path / f"fake{number:02}"
        (fake / "objects").mkdir(parents=True)
        (fake / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    monkeypatch.setattr(nested, "MAX_GIT_DIRS", 4)
    found = nested.git_dirs_in(memrepo.path)
    assert found == [memrepo.path.resolve() / ".git", lib.resolve() / ".git"]


def _copies(memrepo: GitRepo) -> dict[str, str]:
    """original -> copy, for every config file in the work tree the box strips."""
    tree = str(memrepo.path.resolve())
    return {original: copy for copy, original in box_git_config.shown_copies(
        memrepo.ws().repo, lambda path: path.startswith(tree))}


def test_a_config_over_the_bound_is_shown_empty_unread(memrepo: GitRepo, tmp_path: Path) -> None:
    """A config in the tree is the agent's to write, and git took 208 s and 5.2 GB to list one of 78 MB: one over
    MAX_CONFIG_BYTES (its token past a megabyte of comment) is shown as a copy that says so and holds no entry,
    checked by its size before any read; one just at the bound is still stripped as git reads it."""
    big = _clone(memrepo.path, tmp_path, "vendor/big")
    fits = _clone(memrepo.path, tmp_path, "vendor/fits")
    for clone, total in ((big, gitio.MAX_CONFIG_BYTES + 1), (fits, gitio.MAX_CONFIG_BYTES)):
        config = clone / ".git" / "config"
        text = config.read_text(encoding="utf-8")
        filler = total - len(text.encode("utf-8")) - 2
        config.write_text("#" + "x" * filler + "\n" + text, encoding="utf-8")
        assert config.stat().st_size == total
    copies = _copies(memrepo)
    size = gitio.MAX_CONFIG_BYTES + 1
    shown = Path(copies[str(big.resolve() / ".git" / "config")])
    assert shown.read_text(encoding="utf-8") == box_git_config.OVERSIZE.format(size=size,
                                                                               bound=gitio.MAX_CONFIG_BYTES)
    assert git(memrepo.path, "config", "--file", str(shown), "--list") == ""
    stripped = Path(copies[str(fits.resolve() / ".git" / "config")]).read_text(encoding="utf-8")
    assert TOKEN not in stripped and "https://github.com/acme/lib.git" in stripped


def test_hard_links_to_one_config_are_read_once_and_each_shown_stripped(memrepo: GitRepo, tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Three clones whose configs are hard links to one file (the agent can make a thousand) cost one read, not
    three, and the one copy stands over each of their names."""
    clones = [_clone(memrepo.path, tmp_path, f"vendor/lib{number}") for number in range(3)]
    first = clones[0] / ".git" / "config"
    for clone in clones[1:]:
        (clone / ".git" / "config").unlink()
        os.link(first, clone / ".git" / "config")
    read: list[Path] = []
    real_sanitised = box_git_config.sanitised

    def counted(path: Path) -> str | None:
        read.append(path)
        return real_sanitised(path)

    monkeypatch.setattr(box_git_config, "sanitised", counted)
    copies = _copies(memrepo)
    names = [str(clone.resolve() / ".git" / "config") for clone in clones]
    assert len({copies[name] for name in names}) == 1
    assert TOKEN not in Path(copies[names[0]]).read_text(encoding="utf-8")
    assert [path for path in read if path.name == "config" and "vendor" in path.parts] == [Path(names[0])]


def test_includes_of_a_config_in_the_tree_lead_only_to_regular_files_inside_it(memrepo: GitRepo,
                                                                             tmp_path: Path) -> None:
    """A nested clone's config is the agent's to write, and its includes named anything: a file of the kernel's,
    a device, a file outside the tree, a link in the tree that leads out. Only a regular file inside the tree is
    named (an empty one too: the guard watches it), and followed when it holds something (what it includes in
    turn, by the same rule)."""
    lib = _clone(memrepo.path, tmp_path, "vendor/lib")
    outside = tmp_path / "outside.inc"
    outside.write_text("[user]\n\tname = someone\n", encoding="utf-8")
    (lib / "out-link.inc").symlink_to(outside)
    (lib / "empty.inc").write_bytes(b"")
    (lib / "kept.inc").write_text("[include]\n\tpath = also.inc\n\tpath = /proc/self/status\n", encoding="utf-8")
    (lib / "also.inc").write_text("[core]\n\tbare = false\n", encoding="utf-8")
    with (lib / ".git" / "config").open("a", encoding="utf-8") as handle:
        handle.write("[include]\n" + "".join(f"\tpath = {target}\n" for target in (
            "/proc/self/status", "/dev/null", "/sys/kernel/notes", outside, "../out-link.inc", "../empty.inc",
            "../kept.inc")))
    found = gitio.config_files_in_tree(memrepo.ws().repo)
    theirs = [path for path in found if path.is_relative_to(lib) and path.parent != lib / ".git"
              or not path.is_relative_to(memrepo.path)]
    assert theirs == [lib / "empty.inc", lib / "kept.inc", lib / "also.inc"]


def test_an_include_of_a_kernel_file_never_holds_the_runner(memrepo: GitRepo, tmp_path: Path) -> None:
    """`[include] path = /proc/kmsg` (or a link in the tree to it) in a config the agent writes: a regular file
    by its mode, whose read blocks for good for root. Neither the box's list nor the guard's (a tracked file
    .git/config includes is the agent's too) reads it: a child process lists both within its time limit."""
    lib = _clone(memrepo.path, tmp_path, "vendor/lib")
    (lib / "kmsg").symlink_to("/proc/kmsg")
    with (lib / ".git" / "config").open("a", encoding="utf-8") as handle:
        handle.write("[include]\n\tpath = /proc/kmsg\n\tpath = ../kmsg\n")
    (memrepo.path / "shared.inc").write_text("[include]\n\tpath = /proc/kmsg\n\tpath = vendor/lib/kmsg\n",
                                             encoding="utf-8")
    git(memrepo.path, "config", "include.path", "../shared.inc")
    script = ("import sys; from gitmem import gitio; repo = gitio.open_repo(sys.argv[1]); "
              "print(len(gitio.config_files(repo)), len(gitio.config_files_in_tree(repo)))")
    done = subprocess.run([sys.executable, "-c", script, str(memrepo.path)], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    repo = gitio.open_repo(memrepo.path)
    listed = [*gitio.config_files(repo), *gitio.config_files_in_tree(repo)]
    assert memrepo.path / "shared.inc" in listed
    assert [path for path in listed if "kmsg" in str(path)] == []


@needs_bwrap
def test_a_tracked_file_a_nested_clones_config_includes_is_stripped_and_its_status_says_what_it_says_outside(
        memrepo: GitRepo, tmp_path: Path) -> None:
    """A clone kept in the tree tracks a settings file its config includes, a credential in it: shown stripped,
    git status inside the clone hashed the copy and reported it modified. The clone's index is shown as a copy
    that takes that file as unchanged (gitmem.gitio.index_view), as the repository's own is."""
    lib = _clone(memrepo.path, tmp_path, "vendor/lib")
    (lib / "team.gitconfig").write_text(f'[http]\n\textraheader = "{HEADER}"\n[alias]\n\tteam = log -1\n',
                                        encoding="utf-8")
    git(lib, "add", "team.gitconfig")
    git(lib, "commit", "-q", "-m", "the team's git settings")
    git(lib, "config", "include.path", "../team.gitconfig")
    outside = git(lib, "status", "--porcelain")
    index = (lib / ".git" / "index").read_bytes()
    done = _boxed(memrepo, "cat vendor/lib/team.gitconfig; git -C vendor/lib config --list; echo =====; "
                           "git -C vendor/lib status --porcelain")
    assert done.returncode == 0, done.stderr
    shown, status = done.stdout.split("=====\n")
    assert _said(done.stdout, done.stderr) == []
    assert "alias.team=log -1\n" in shown
    assert status == outside == ""
    assert (lib / ".git" / "index").read_bytes() == index
