"""A memory file that is not UTF-8 got past the hooks (committed with --no-verify). Every reader names the same
thing wrong at the same place, GM902 at the line of the first bad byte, and none crashes: `check --worktree`,
`status`, the close, each memory write (which used to build on the empty text decoding left: `log amend`, the
repair its old GM306 pointed to, said GM301 at line 1), and `verify`. LOG's one way out is its bytes replaced by
U+FFFD, which `check` takes as the old LOG (no byte of text changed), then the amendment of the heading.
Real repositories and the real CLI."""
from __future__ import annotations

from tests.cycle.test_two_writers import session
from tests.support.gitcli import git
from tests.support.helpers import DANA, GitRepo

BAD_HEADING = b"## 2026-12-07 11:00 UTC \xff cycle 2 \xff built"


def _committed_without_the_check(repo: GitRepo, path: str, data: bytes) -> None:
    (repo.path / path).write_bytes(data)
    git(repo.path, "commit", "-q", "--no-verify", "-am", f"{path} by hand", who=DANA)


def _diagnosis(repo: GitRepo, *argv: str) -> str:
    done = session(repo, *argv, check=False)
    assert "Traceback" not in done.stderr and done.returncode in (1, 3), (argv, done.stdout, done.stderr)
    return done.stdout + done.stderr


def test_a_log_heading_with_bytes_that_are_no_text_reads_as_gm902_everywhere_and_is_repaired(
        memrepo: GitRepo) -> None:
    session(memrepo, "log", "add", "--task", "first", "--outcome", "built", "--result", "done")
    git(memrepo.path, "commit", "-q", "-am", "session: first", who=DANA)
    start = memrepo.head()
    old = (memrepo.path / "LOG.md").read_bytes()
    _committed_without_the_check(memrepo, "LOG.md", old + b"\n" + BAD_HEADING + b"\n- Task: t\n- Result: r\n")
    line = old.count(b"\n") + 2
    byte = len(old) + 1 + BAD_HEADING.index(b"\xff")
    said = f"LOG.md:{line}: GM902 not valid UTF-8 (byte {byte}: invalid start byte)"
    for argv in (["check", "--worktree"], ["close", "--no-llm"], ["verify", "--range", f"{start}..HEAD"],
                 ["log", "amend", "--line", str(line), "--task", "t", "--outcome", "built", "--result", "r"],
                 ["log", "add", "--task", "t", "--outcome", "built", "--result", "r"]):
        out = _diagnosis(memrepo, *argv)
        assert said in out and "GM301" not in out and "GM306" not in out, (argv, out)
        assert argv[0] in ("check", "verify") or "LOG.md is not valid UTF-8, so there is no text to build on" in out
    assert said in session(memrepo, "status").stdout
    assert (memrepo.path / "LOG.md").read_bytes().startswith(old + b"\n" + BAD_HEADING), "nothing was rewritten"
    # The repair: each byte that is no text becomes U+FFFD, the one change of LOG's lines `check` allows.
    data = (memrepo.path / "LOG.md").read_bytes()
    (memrepo.path / "LOG.md").write_bytes(data.decode("utf-8", "replace").encode("utf-8"))
    git(memrepo.path, "add", "LOG.md", who=DANA)
    assert session(memrepo, "check").returncode == 0
    git(memrepo.path, "commit", "-q", "-m", "LOG: the bytes that were no text are U+FFFD", who=DANA)
    repaired = memrepo.head()
    assert f"LOG.md:{line}: GM306" in session(memrepo, "status").stdout      # now a heading, to amend
    session(memrepo, "log", "amend", "--line", str(line), "--task", "t", "--outcome", "built", "--result", "r")
    git(memrepo.path, "commit", "-q", "-am", "amend the hand-written entry", who=DANA)
    assert session(memrepo, "verify", "--range", f"{repaired}~1..HEAD").returncode == 0


def test_lessons_and_now_that_are_no_text_are_gm902_at_their_bad_line_not_an_empty_file(memrepo: GitRepo) -> None:
    lessons = (memrepo.path / "LESSONS.md").read_bytes()
    now = (memrepo.path / "NOW.md").read_bytes()
    _committed_without_the_check(memrepo, "LESSONS.md", lessons + b"\n## L-0001 \xff bad\n")
    _committed_without_the_check(memrepo, "NOW.md", now + b"x\xfe\n")
    lesson_line, now_line = lessons.count(b"\n") + 2, now.count(b"\n") + 1
    expected = [f"LESSONS.md:{lesson_line}: GM902 not valid UTF-8", f"NOW.md:{now_line}: GM902 not valid UTF-8"]
    checked = _diagnosis(memrepo, "check", "--worktree")
    assert all(text in checked for text in expected) and "GM907" not in checked, checked
    status = session(memrepo, "status").stdout
    assert all(text in status for text in expected) and "GM907" not in status, status
    for argv in (["lesson", "add", "--title", "x", "--happened", "y", "--why", "z", "--change", "w"],
                 ["now", "add", "--did", "a", "--human", "b", "--next", "c"], ["close", "--no-llm"]):
        out = _diagnosis(memrepo, *argv)
        assert any(text in out for text in expected) and "GM907" not in out, (argv, out)
    assert (memrepo.path / "LESSONS.md").read_bytes().endswith(b"\xff bad\n")
    assert (memrepo.path / "NOW.md").read_bytes().endswith(b"x\xfe\n")
