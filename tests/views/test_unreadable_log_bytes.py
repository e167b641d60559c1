"""Bytes that are not UTF-8 in a LOG entry's body (committed past the hook): `check` names them (GM902), and the
readers that replace them with U+FFFD said nothing. `status` names those of the entries it reads, at no extra
decode; `report` and `recall` say on stderr (and in their data) which lines they could not read."""
from __future__ import annotations

import json
import sqlite3

from gitmem.errors import ExitCode
from tests.support.helpers import GitRepo

LOG_ADD = ["log", "add", "--task", "measure the parser", "--outcome", "built", "--result", "parser measured at 12 ms",
           "--evidence", "bench run"]


def with_bad_bytes(memrepo: GitRepo, cli) -> tuple[int, int]:
    """A session's entry whose Result line holds two bytes that are no UTF-8, committed without the hook:
    (the line, the offset of the first bad byte) `gitmem check --worktree` names."""
    assert cli(LOG_ADD, cwd=memrepo.path).code == ExitCode.OK
    data = (memrepo.path / "LOG.md").read_bytes()
    at = data.index(b"parser measured at 12 ms") + len(b"parser measured")
    memrepo.commit_files({"LOG.md": data[:at] + b" \xff\xfe" + data[at:]}, "an entry with bad bytes")
    return data.count(b"\n", 0, at) + 1, at + 1


def test_status_names_bad_bytes_in_the_entries_it_reads(memrepo: GitRepo, cli) -> None:
    line, byte = with_bad_bytes(memrepo, cli)
    check = cli(["check", "--worktree"], cwd=memrepo.path)
    said = f"LOG.md:{line}: GM902 not valid UTF-8 (byte {byte}: invalid start byte)"
    assert check.lines[0].startswith(said + " [not-utf8]"), check.out
    shown = cli(["status"], cwd=memrepo.path)
    assert shown.code == ExitCode.OK
    assert any(text.strip().startswith(said) for text in shown.lines), shown.out
    data = json.loads(cli(["status", "--json"], cwd=memrepo.path).out)
    assert [(u["path"], u["line"], u["code"]) for u in data["unreadable"]] == [("LOG.md", line, "GM902")]


def test_status_says_nothing_of_a_clean_log(memrepo: GitRepo, cli) -> None:
    assert cli(LOG_ADD, cwd=memrepo.path).code == ExitCode.OK
    data = json.loads(cli(["status", "--json"], cwd=memrepo.path).out)
    assert data["unreadable"] == [] and "unreadable" not in cli(["status"], cwd=memrepo.path).out


def test_report_says_once_on_stderr_and_on_the_page_which_line_it_could_not_read(memrepo: GitRepo, cli) -> None:
    line, byte = with_bad_bytes(memrepo, cli)
    page = memrepo.path / "page.html"
    for argv in (["report", "--out", str(page)], ["report", "--format", "summary"],
                 ["report", "--out", str(page), "--since", "2000-01-01"]):
        done = cli(argv, cwd=memrepo.path)
        assert done.code == ExitCode.OK, done.err
        said = [text for text in done.err.splitlines() if "GM902" in text]
        assert len(said) == 1 and said[0].startswith(
            f"LOG.md:{line}: GM902 not valid UTF-8 (byte {byte}: invalid start byte): some entries could not be "
            "read whole"), done.err
    assert f"LOG.md:{line}: GM902" in page.read_text(encoding="utf-8")


def test_recall_says_which_lines_it_could_not_read_as_the_index_grows(memrepo: GitRepo, cli) -> None:
    """Kept by the index as it is synced (whole, then only what LOG appends), so a recall reads no LOG for it."""
    line, byte = with_bad_bytes(memrepo, cli)
    done = cli(["recall", "parser measured"], cwd=memrepo.path)
    assert done.code == ExitCode.OK and "LOG.md" in done.out
    assert done.err.startswith(f"LOG.md:{line}: GM902 not valid UTF-8 (byte {byte}: invalid start byte): some "
                               "entries could not be read whole and show U+FFFD (1 line(s);"), done.err
    # An entry appended after it (by hand: the writers refuse a LOG that is not UTF-8), synced alone, keeps the
    # first; a second bad one joins it.
    log = memrepo.path / "LOG.md"
    memrepo.commit_files({"LOG.md": log.read_bytes() + b"\n## 2099-01-01 09:00 UTC \xc2\xb7 cycle 9 \xc2\xb7 built\n"
                                                        b"- Task: parser measured again\n"}, "appended")
    answer = json.loads(cli(["recall", "parser measured", "--json"], cwd=memrepo.path).out)
    assert [(u["path"], u["line"], u["code"]) for u in answer["unreadable"]] == [("LOG.md", line, "GM902")]
    second = log.read_bytes().count(b"\n") + 3
    memrepo.commit_files({"LOG.md": log.read_bytes() + b"\n## 2099-01-02 09:00 UTC \xc2\xb7 cycle 10 \xc2\xb7 built\n"
                                                        b"- Task: parser measured \xff once more\n"}, "appended")
    answer = json.loads(cli(["recall", "parser measured", "--json"], cwd=memrepo.path).out)
    assert [u["line"] for u in answer["unreadable"]] == [line, second], answer["unreadable"]


def test_an_index_from_before_recall_named_bad_bytes_is_rebuilt_and_names_them(memrepo: GitRepo, cli) -> None:
    """An index the previous release built kept no such lines in its sync state: it is from another schema and
    is rebuilt, not trusted to have read LOG whole."""
    line, _ = with_bad_bytes(memrepo, cli)
    assert cli(["recall", "parser measured"], cwd=memrepo.path).code == ExitCode.OK
    index = memrepo.path / ".git" / "gitmem" / "recall.sqlite"
    conn = sqlite3.connect(index)
    with conn:      # as the previous release left it: its schema number, and no `undecodable` in any state
        conn.execute("UPDATE meta SET value = '10' WHERE key = 'schema'")
        for path, state in conn.execute("SELECT path, state FROM sources").fetchall():
            kept = {key: value for key, value in json.loads(state).items() if key != "undecodable"}
            conn.execute("UPDATE sources SET state = ? WHERE path = ?", (json.dumps(kept), path))
    conn.close()
    answer = json.loads(cli(["recall", "parser measured", "--json"], cwd=memrepo.path).out)
    assert [(u["path"], u["line"]) for u in answer["unreadable"]] == [("LOG.md", line)], answer["unreadable"]


def test_recall_of_a_clean_log_says_nothing(memrepo: GitRepo, cli) -> None:
    assert cli(LOG_ADD, cwd=memrepo.path).code == ExitCode.OK
    done = cli(["recall", "parser measured", "--json"], cwd=memrepo.path)
    assert json.loads(done.out)["unreadable"] == [] and "GM902" not in done.err
