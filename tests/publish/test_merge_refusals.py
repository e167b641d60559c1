"""`gitmem merge` refuses in the diagnostics' form, as every refusal does: one `path:line: GMnnn message` line for
each path that does not merge by memory rules, and nothing changed. Real repositories and the real CLI."""
from __future__ import annotations

from gitmem import codes
from tests.cycle.test_two_writers import session
from tests.support.gitcli import git
from tests.support.helpers import DANA, GitRepo


def test_a_file_both_sides_changed_is_refused_as_a_gm924_line_naming_it_and_nothing_changes(
        memrepo: GitRepo) -> None:
    memrepo.commit_files({"notes.txt": "base\n"}, "notes")
    git(memrepo.path, "switch", "-q", "-c", "side", who=DANA)
    memrepo.commit_files({"notes.txt": "the side's\n"}, "side's notes")
    git(memrepo.path, "switch", "-q", "main", who=DANA)
    memrepo.commit_files({"notes.txt": "main's\n"}, "main's notes")
    head = memrepo.head()

    refused = session(memrepo, "merge", "side", check=False)

    assert refused.returncode == 1
    lines = refused.stderr.splitlines()
    assert lines[0] == "gitmem: merge: side does not merge by memory rules; nothing was changed"
    assert lines[1].startswith(f"notes.txt:1: {codes.SIDE_MERGE_CONFLICT.code} notes.txt does not merge with side "
                               "by memory rules")
    assert "(hint: merge by hand: `git merge side`, resolve, then `gitmem check`)" in lines[1]
    assert memrepo.head() == head and memrepo.read("notes.txt") == "main's\n"
