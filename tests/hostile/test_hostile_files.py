"""Hostile cases, class 1: memory files, ROADMAP, `always_load` files and gitmem.yaml are regular files inside the
work tree, or they are refused. One function opens them all (`gitmem.confined.files`); these cases attack it
directly, through every command that reads or writes memory, through `check`, `verify` and through the runner.

Every case asserts the contract: the exit code, no traceback, one line naming the file, nothing outside the
tree touched, and nothing of the human's lost.
"""
from __future__ import annotations

import os
from pathlib import Path

import pygit2
import pytest

from gitmem.confined import files
from tests.support.helpers import GitRepo
from tests.support.hostile import KINDS, assert_clean_failure, deadline, digest, fail_open, plant

MODES = {"link-outside": files.LINK, "link-inside": files.LINK, "link-loop": files.LINK,
         "link-dangling": files.LINK, "directory": files.TREE, "fifo": files.SPECIAL, "submodule": files.GITLINK}


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    place = tmp_path / "outside"
    place.mkdir()
    (place / "precious.txt").write_text("the human's file outside the repository\n", encoding="utf-8")
    return place


# -- the one function, attacked directly ------------------------------------------------------------------------

@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("operation", ["read", "write", "append", "size"])
def test_anything_but_a_regular_file_is_refused(memrepo: GitRepo, outside: Path, kind: str, operation: str) -> None:
    plant(memrepo.path, "LOG.md", kind, outside)
    before = digest(outside)
    with deadline(), pytest.raises(files.FileRefused) as refused:
        if operation == "read":
            files.read_bytes(memrepo.path, "LOG.md")
        elif operation == "write":
            files.write_bytes(memrepo.path, "LOG.md", b"# LOG\n")
        elif operation == "append":
            files.open_append(memrepo.path, "LOG.md")
        else:
            files.file_size(memrepo.path, "LOG.md")
    assert str(refused.value).startswith("LOG.md is ") and "regular file inside the work tree" in str(refused.value)
    assert refused.value.exit_code == 2
    assert digest(outside) == before
    assert os.path.lexists(memrepo.path / "LOG.md")          # what stood there is left alone, not replaced


@pytest.mark.parametrize("kind", KINDS)
def test_the_mode_says_what_stands_there(memrepo: GitRepo, outside: Path, kind: str) -> None:
    plant(memrepo.path, "RULES.md", kind, outside)
    assert files.mode(memrepo.path, "RULES.md") == MODES[kind]
    assert files.mode(memrepo.path, "NOW.md") == files.REGULAR
    assert files.mode(memrepo.path, "nothing.md") is None


@pytest.mark.parametrize("rel", ["/etc/passwd", "../outside/precious.txt", "a/../../x.md", ".git/hooks/pre-commit",
                                 ".GIT/config", ".git./config", "vendor/lib/.git/hooks/post-checkout", "",
                                 "a\\b.md", "nul\0.md"])
def test_paths_that_leave_the_tree_are_refused(memrepo: GitRepo, outside: Path, rel: str) -> None:
    before = digest(outside), digest(memrepo.path / ".git" / "hooks")
    for operation in (lambda: files.read_bytes(memrepo.path, rel), lambda: files.write_bytes(memrepo.path, rel, b"x")):
        with pytest.raises(files.FileRefused):
            operation()
    assert (digest(outside), digest(memrepo.path / ".git" / "hooks")) == before


def test_a_memory_dir_inside_git_never_writes_a_hook(memrepo: GitRepo, cli, monkeypatch) -> None:
    """Config validation is the first line (issue class 2); the file layer refuses it anyway."""
    monkeypatch.setenv("GITMEM_CYCLE", "1")
    hooks = memrepo.path / ".git" / "hooks"
    before = digest(hooks)
    with pytest.raises(files.FileRefused, match="inside a .git directory"):
        files.write_bytes(memrepo.path, ".git/hooks/pre-commit", b"#!/bin/sh\nexit 0\n")
    memrepo.write("gitmem.yaml", "memory_dir: .git/hooks\nfiles:\n  now: pre-commit\n")
    result = cli(WRITERS["NOW.md"], cwd=memrepo.path)
    assert result.code == 2 and "Traceback" not in result.err
    assert digest(hooks) == before and not (hooks / "pre-commit").exists()


def test_a_file_the_os_will_not_open_names_the_fix(memrepo: GitRepo, monkeypatch) -> None:
    """Permission denied (simulated: the suite may run as root, who is never denied). A file whose permissions
    let this user write it is refused by a sandbox or a security policy, and `chmod` would not help; one whose
    permissions do not is the user's to fix with `chmod`."""
    import errno

    fail_open(monkeypatch, "RULES.md", PermissionError(errno.EACCES, "Permission denied"))
    with pytest.raises(files.FileRefused, match=r"^RULES.md cannot be opened: permission denied although its "
                                                r"permissions let you write it, so a sandbox or security policy "
                                                r"refuses writes here; nothing was changed; .*read-only sandbox"):
        files.read_bytes(memrepo.path, "RULES.md")
    if os.geteuid() != 0:           # root may write whatever the bits say
        (memrepo.path / "RULES.md").chmod(0o444)
        with pytest.raises(files.FileRefused, match=r"^RULES.md cannot be opened \(permission denied\).*chmod u\+rw"):
            files.read_bytes(memrepo.path, "RULES.md")


def test_a_linked_directory_on_the_way_is_refused(memrepo: GitRepo, outside: Path) -> None:
    (memrepo.path / "mem").symlink_to(outside)
    before = digest(outside)
    with pytest.raises(files.FileRefused, match=r"^mem/NOW.md is inside mem, which is a symbolic link"):
        files.write_bytes(memrepo.path, "mem/NOW.md", b"# NOW\n")
    with pytest.raises(files.FileRefused):
        files.read_bytes(memrepo.path, "mem/precious.txt")
    assert digest(outside) == before
    assert files.mode(memrepo.path, "mem/precious.txt") == files.LINK


def test_a_file_on_the_way_is_refused(memrepo: GitRepo) -> None:
    memrepo.write("mem", "a file, not a directory\n")
    with pytest.raises(files.FileRefused, match=r"^mem/NOW.md is inside mem, which is not a directory"):
        files.write_bytes(memrepo.path, "mem/NOW.md", b"# NOW\n")
    assert memrepo.read("mem") == "a file, not a directory\n"


def test_an_append_through_a_hard_link_is_refused_and_a_rewrite_breaks_the_link(memrepo: GitRepo,
                                                                                 outside: Path) -> None:
    os.link(memrepo.path / "LOG.md", outside / "LOG-hardlink.md")
    before = digest(outside)
    with pytest.raises(files.FileRefused, match="hard links"):
        files.open_append(memrepo.path, "LOG.md")
    files.write_bytes(memrepo.path, "NOW.md", b"# NOW\n")                    # not linked: written as usual
    assert digest(outside) == before                                  # the refused append changed nothing
    os.link(memrepo.path / "RULES.md", outside / "RULES-hardlink.md")
    linked = digest(outside)
    rules_before = (outside / "RULES-hardlink.md").read_bytes()
    files.write_bytes(memrepo.path, "RULES.md", b"# RULES\n")                # atomic: a new inode, the link is broken
    assert (outside / "RULES-hardlink.md").read_bytes() == rules_before
    assert linked != before and digest(outside) == linked             # only the new hard link was added
    assert (outside / "precious.txt").read_text(encoding="utf-8").startswith("the human's")


def test_a_write_keeps_the_mode_and_creates_missing_directories(memrepo: GitRepo) -> None:
    (memrepo.path / "NOW.md").chmod(0o755)
    files.write_bytes(memrepo.path, "NOW.md", b"# NOW\n")
    assert (memrepo.path / "NOW.md").stat().st_mode & 0o777 == 0o755
    files.write_bytes(memrepo.path, "agents/writer/NOW.md", b"# NOW\n")
    assert files.read_bytes(memrepo.path, "agents/writer/NOW.md") == b"# NOW\n"
    assert not [p for p in (memrepo.path / "agents" / "writer").iterdir() if p.name.endswith(".tmp")]


# -- every command that reads or writes memory -------------------------------------------------------------------

WRITERS = {
    "LOG.md": ["log", "add", "--task", "t", "--outcome", "built", "--result", "r"],
    "NOW.md": ["now", "add", "--did", "d", "--human", "h", "--next", "n"],
    "DECISIONS.md": ["decision", "ask", "--title", "Which?", "--recommendation", "this one"],
    "LESSONS.md": ["lesson", "add", "--title", "t", "--happened", "h", "--why", "w", "--change", "c"],
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("rel", sorted(WRITERS))
def test_a_memory_write_exits_2_naming_the_file(memrepo: GitRepo, outside: Path, cli, monkeypatch, kind: str,
                                                rel: str) -> None:
    monkeypatch.setenv("GITMEM_CYCLE", "1")
    plant(memrepo.path, rel, kind, outside)
    before = digest(outside)
    with deadline():
        result = cli(WRITERS[rel], cwd=memrepo.path)
    assert_clean_failure(result, 2, rel, "regular file")
    assert digest(outside) == before


@pytest.mark.parametrize("kind", KINDS)
def test_context_exits_2_naming_the_rules_file(memrepo: GitRepo, outside: Path, cli, kind: str) -> None:
    plant(memrepo.path, "RULES.md", kind, outside)
    with deadline():
        result = cli(["context"], cwd=memrepo.path)
    assert_clean_failure(result, 2, "RULES.md")


# The readers that do not read a given memory file (the summary report reads no NOW). `pending` reads DECISIONS
# only, but first makes sure the memory is there, as `status` does (cli.common.open_memory): a linked LOG or NOW
# is refused there too, exit 2, naming it.
DOES_NOT_READ = {("report", "NOW.md")}


@pytest.mark.parametrize("argv", [["status"], ["pending"], ["recall", "clock"],
                                  ["report", "--format", "summary", "--out", "-"], ["context"]])
@pytest.mark.parametrize("rel", ["LOG.md", "DECISIONS.md", "NOW.md"])
def test_readers_exit_2_on_a_linked_memory_file(memrepo: GitRepo, outside: Path, cli, argv: list[str],
                                                rel: str) -> None:
    plant(memrepo.path, rel, "link-outside", outside)
    with deadline():
        result = cli(argv, cwd=memrepo.path)
    if (argv[0], rel) in DOES_NOT_READ:      # nothing to refuse; any other reader that exits 0 followed the link
        assert result.code == 0 and "Traceback" not in result.err
        return
    assert_clean_failure(result, 2, rel)


@pytest.mark.parametrize("rel", ["ROADMAP.md", "docs/brief.md"])
def test_a_linked_roadmap_or_always_load_file_is_never_loaded(memrepo: GitRepo, outside: Path, cli, rel: str) -> None:
    memrepo.commit_files({"gitmem.yaml": "cycle:\n  always_load: [docs/brief.md]\n", "docs/brief.md": "# Brief\n"})
    (outside / "secret.md").write_text("## Now (current)\n- [ ] the outside file's words\n", encoding="utf-8")
    (memrepo.path / rel).unlink()
    (memrepo.path / rel).symlink_to(outside / "secret.md")
    result = cli(["context"], cwd=memrepo.path)
    assert_clean_failure(result, 2, rel)
    assert "outside file's words" not in result.out
    check = cli(["check", "--worktree"], cwd=memrepo.path)
    assert check.code == 1 and check.lines[0].startswith(f"{rel}:1: GM908 {rel} is a symbolic link")


def test_a_memory_dir_through_a_linked_directory_is_refused(memrepo: GitRepo, outside: Path, cli,
                                                            monkeypatch) -> None:
    monkeypatch.setenv("GITMEM_CYCLE", "1")
    memrepo.commit_files({"gitmem.yaml": "memory_dir: mem\n"})
    (memrepo.path / "mem").symlink_to(outside)
    before = digest(outside)
    for argv in (WRITERS["LOG.md"], ["context"], ["status"]):
        assert_clean_failure(cli(argv, cwd=memrepo.path), 2, "mem", "symbolic link")
    assert digest(outside) == before


# -- check and verify --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", KINDS)
def test_check_worktree_reports_gm908_with_the_path(memrepo: GitRepo, outside: Path, cli, kind: str) -> None:
    plant(memrepo.path, "RULES.md", kind, outside)
    with deadline():
        result = cli(["check", "--worktree"], cwd=memrepo.path)
    assert result.code == 1 and "Traceback" not in result.err
    assert [line.split(" ")[:2] for line in result.lines] == [["RULES.md:1:", "GM908"]]


def test_a_staged_link_whose_target_is_valid_memory_fails_check(memrepo: GitRepo, outside: Path, cli) -> None:
    """The target has the right content: without the mode, check read through the link and passed."""
    plant(memrepo.path, "RULES.md", "link-outside", outside)
    memrepo.stage("RULES.md")
    assert memrepo.repo.index["RULES.md"].mode == files.LINK
    result = cli(["check"], cwd=memrepo.path)
    assert result.code == 1
    assert result.lines[0].startswith("RULES.md:1: GM908 RULES.md is a symbolic link; it must be a regular file")


def test_an_executable_memory_file_is_a_regular_file(memrepo: GitRepo, cli, monkeypatch) -> None:
    """The index side accepts both blob modes: 100755 is a regular file too, for check, verify, readers and
    writers alike (only links, directories and submodules are refused)."""
    monkeypatch.setenv("GITMEM_CYCLE", "1")
    start = memrepo.head()
    (memrepo.path / "LOG.md").chmod(0o755)
    memrepo.stage("LOG.md")
    assert memrepo.repo.index["LOG.md"].mode == pygit2.enums.FileMode.BLOB_EXECUTABLE
    staged = cli(["check"], cwd=memrepo.path)
    assert staged.code == 0, staged.out + staged.err
    memrepo.commit("LOG.md is executable now")
    assert cli(["verify", "--range", f"{start}..HEAD"], cwd=memrepo.path).code == 0
    assert cli(["status"], cwd=memrepo.path).code == 0
    written = cli(WRITERS["LOG.md"], cwd=memrepo.path)
    assert written.code == 0, written.err
    assert "- Task: t" in memrepo.read("LOG.md")
    assert cli(["check", "--worktree"], cwd=memrepo.path).code == 0


def test_a_staged_submodule_fails_check(memrepo: GitRepo, cli) -> None:
    index = memrepo.repo.index
    index.read()
    index.remove("LESSONS.md")
    index.add(pygit2.IndexEntry("LESSONS.md", pygit2.Oid(hex=memrepo.head()), pygit2.enums.FileMode.COMMIT))
    index.write()
    result = cli(["check"], cwd=memrepo.path)
    assert result.code == 1 and "Traceback" not in result.err
    assert result.lines[0].startswith("LESSONS.md:1: GM908 LESSONS.md is a submodule")


def test_verify_reports_a_committed_link_and_a_later_commit_is_judged_on_its_own(memrepo: GitRepo, outside: Path,
                                                                                  cli) -> None:
    start = memrepo.head()
    plant(memrepo.path, "ROADMAP.md", "link-outside", outside)
    memrepo.stage("ROADMAP.md")
    memrepo.commit("link the roadmap")
    result = cli(["verify", "--range", f"{start}..HEAD"], cwd=memrepo.path)
    assert result.code == 1 and result.lines[0].startswith("ROADMAP.md:1: GM908 ROADMAP.md is a symbolic link")
    # Old history keeps passing: a later change that leaves the optional link as it was is not blamed for it.
    linked = memrepo.head()
    memrepo.commit_files({"notes.txt": "unrelated\n"})
    assert cli(["verify", "--range", f"{linked}..HEAD"], cwd=memrepo.path).code == 0
    assert cli(["check"], cwd=memrepo.path).code == 0


def test_a_committed_link_to_a_required_file_is_gm908_not_missing(memrepo: GitRepo, outside: Path, cli) -> None:
    plant(memrepo.path, "RULES.md", "link-outside", outside)
    memrepo.stage("RULES.md")
    memrepo.commit("link the rules")
    result = cli(["check"], cwd=memrepo.path)
    assert result.code == 1 and [line.split(" ")[1] for line in result.lines] == ["GM908"]


@pytest.mark.parametrize("kind", ["link-outside", "directory", "fifo"])
def test_gitmem_yaml_that_is_not_a_regular_file_exits_2(memrepo: GitRepo, outside: Path, cli, kind: str) -> None:
    plant(memrepo.path, "gitmem.yaml", kind, outside)
    for argv in (["check", "--worktree"], ["status"], WRITERS["NOW.md"], ["context"]):
        with deadline():
            assert_clean_failure(cli(argv, cwd=memrepo.path), 2, "gitmem.yaml")


@pytest.mark.parametrize("kind", ["link-outside", "link-inside", "directory"])
def test_check_judges_a_planted_gitmem_yaml_by_the_index(memrepo: GitRepo, outside: Path, cli, kind: str) -> None:
    """What is staged is what is committed: a regular gitmem.yaml in the index checks clean; staged as a link,
    it is GM908 (a directory cannot be staged as a file at all)."""
    plant(memrepo.path, "gitmem.yaml", kind, outside)
    with deadline():
        assert cli(["check"], cwd=memrepo.path).code == 0
    if kind.startswith("link"):
        memrepo.stage("gitmem.yaml")
        result = cli(["check"], cwd=memrepo.path)
        assert result.code == 1 and [line.split(" ")[1] for line in result.lines] == ["GM908"]


def test_a_staged_link_as_gitmem_yaml_is_gm908(memrepo: GitRepo, outside: Path, cli) -> None:
    plant(memrepo.path, "gitmem.yaml", "link-outside", outside)
    memrepo.stage("gitmem.yaml")
    (memrepo.path / "gitmem.yaml").unlink()
    memrepo.write("gitmem.yaml", "timezone: UTC\n")        # the work tree is fine; the index is not
    result = cli(["check"], cwd=memrepo.path)
    assert result.code == 1 and result.lines[0].startswith("gitmem.yaml:1: GM908 gitmem.yaml is a symbolic link")


# -- the runner ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["link-outside", "link-inside", "directory", "fifo"])
def test_the_runner_never_commits_a_planted_rules_file(memrepo: GitRepo, outside: Path, kind: str) -> None:
    from gitmem.cycle.runner import Settings, run_cycle
    from tests.support.cycle_support import WritingBackend, is_clean

    def act(memory, request) -> None:
        plant(request.root, "RULES.md", kind, outside)
        memory.add_log_entry(task="t", outcome="built", result="r")
        memory.add_now_block(did="d", human="h", next="n")

    before = memrepo.read("RULES.md")
    with deadline():
        report = run_cycle(memrepo.ws(), WritingBackend(act), settings=Settings())
    assert report.exit_code == 4 and report.salvage_branch is not None
    assert "RULES.md" in (report.error or "")
    tree = memrepo.repo.head.peel(pygit2.Commit).tree
    assert tree["RULES.md"].filemode == files.REGULAR and tree["RULES.md"].data.decode() == before
    assert memrepo.read("RULES.md") == before and is_clean(memrepo)
    if kind == "link-outside":
        assert (outside / "RULES.md").read_text(encoding="utf-8") == before


# -- init never writes through a link -----------------------------------------------------------------------------

def test_init_never_writes_through_a_linked_directory(tmp_path: Path, outside: Path, cli, git_env) -> None:
    target = tmp_path / "agent"
    target.mkdir()
    pygit2.init_repository(str(target), initial_head="main")
    (target / "prompts").symlink_to(outside)
    before = digest(outside)
    result = cli(["init", str(target)], cwd=tmp_path)
    assert "Traceback" not in result.err and result.code == 2      # init did what it could, and says what not
    assert "prompts/cycle.md is inside prompts, which is a symbolic link" in result.out + result.err
    assert digest(outside) == before
    assert (target / "NOW.md").is_file()


def test_init_with_a_directory_as_pre_commit_config(tmp_path: Path, cli, git_env) -> None:
    target = tmp_path / "agent"
    (target / ".pre-commit-config.yaml").mkdir(parents=True)
    pygit2.init_repository(str(target), initial_head="main")
    result = cli(["init", str(target)], cwd=tmp_path)
    assert "Traceback" not in result.err and result.code == 2      # init did what it could, and says what not
    assert ".pre-commit-config.yaml is a directory" in result.out + result.err
    assert (target / ".pre-commit-config.yaml").is_dir()


def test_remove_takes_a_file_or_a_link_never_what_it_points_to(memrepo: GitRepo, outside: Path) -> None:
    plant(memrepo.path, "ROADMAP.md", "link-outside", outside)
    files.remove_file(memrepo.path, "ROADMAP.md")
    assert not os.path.lexists(memrepo.path / "ROADMAP.md") and (outside / "ROADMAP.md").is_file()
    files.remove_file(memrepo.path, "ROADMAP.md")                  # missing: nothing to do
    files.remove_file(memrepo.path, "no/such/dir/x.md")
    files.remove_file(memrepo.path, "NOW.md")
    assert not (memrepo.path / "NOW.md").exists()
    plant(memrepo.path, "LOG.md", "directory", outside)
    with pytest.raises(files.FileRefused, match="is a directory"):
        files.remove_file(memrepo.path, "LOG.md")
    assert (memrepo.path / "LOG.md" / "inside.md").is_file()


def test_what_was_opened_is_checked_not_what_the_name_said(memrepo: GitRepo, outside: Path, monkeypatch) -> None:
    """A FIFO swapped in between the look and the open: fstat on the opened descriptor still refuses it."""
    plant(memrepo.path, "NOW.md", "fifo", outside)
    monkeypatch.setattr(files, "_what", lambda dir_fd, name: None)
    with deadline(), pytest.raises(files.FileRefused, match="FIFO"):
        files.read_bytes(memrepo.path, "NOW.md")


def test_a_failed_write_leaves_the_old_file_and_no_temporary(memrepo: GitRepo, monkeypatch) -> None:
    import errno

    before = memrepo.read("NOW.md")

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(files.os, "fsync", full)
    with pytest.raises(files.FileRefused, match=r"^NOW.md cannot be written: no space is left on the device \(or "
                                                  r"the disk quota is reached\); nothing was changed; free some space"):
        files.write_bytes(memrepo.path, "NOW.md", b"# NOW\n\nnew\n")
    assert memrepo.read("NOW.md") == before
    assert not [p.name for p in memrepo.path.iterdir() if p.name.endswith(".tmp")]


def test_an_os_error_names_the_file(memrepo: GitRepo, monkeypatch) -> None:
    import errno

    fail_open(monkeypatch, "LOG.md", OSError(errno.EIO, "Input/output error"))
    with pytest.raises(files.FileRefused, match=r"^LOG.md could not be opened \(Input/output error\)"):
        files.read_bytes(memrepo.path, "LOG.md")


@pytest.mark.parametrize("argv", [WRITERS["LOG.md"], WRITERS["NOW.md"]])
def test_a_full_disk_exits_2_and_memory_is_as_it_was(memrepo: GitRepo, cli, monkeypatch, argv: list[str]) -> None:
    import errno

    monkeypatch.setenv("GITMEM_CYCLE", "1")
    before = {rel: memrepo.read(rel) for rel in ("LOG.md", "NOW.md")}

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    result = cli(argv, cwd=memrepo.path)
    monkeypatch.undo()
    assert_clean_failure(result, 2, "cannot be written: no space is left on the device (or the disk quota is "
                                    "reached); nothing was changed; free some space")
    assert {rel: memrepo.read(rel) for rel in before} == before


@pytest.mark.parametrize("planted", [".claude", "CLAUDE.md", ".cursor", ".gitmem"])
def test_init_agent_never_writes_through_a_link(tmp_path: Path, outside: Path, cli, git_env, planted: str) -> None:
    target = tmp_path / "agent"
    target.mkdir()
    pygit2.init_repository(str(target), initial_head="main")
    assert cli(["init", str(target)], cwd=tmp_path).code == 0
    (outside / "kept").mkdir(parents=True)
    (target / planted).symlink_to(outside / "kept" if not planted.endswith(".md") else outside / "kept" / "x.md")
    before = digest(outside)
    result = cli(["init", str(target), "--agent", "claude", "--agent", "cursor"], cwd=tmp_path)
    assert "Traceback" not in result.err and result.code == 2
    assert "symbolic link" in result.out + result.err
    assert digest(outside) == before


def test_restoring_a_path_head_lacks_never_removes_through_a_planted_link(memrepo: GitRepo, tmp_path: Path) -> None:
    from gitmem import gitio

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "notes.md").write_text("the human's notes\n")
    os.symlink(outside, memrepo.path / "docs")
    gitio.restore_paths(memrepo.handle, ["docs/notes.md"])
    assert (outside / "notes.md").read_text() == "the human's notes\n"
