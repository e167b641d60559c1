"""A problem about a whole memory file (GM508: RULES.md has no `## Proven rules`) is named at one line, the
file's last, by `check`, `status` and `init` alike, and `status` adds no empty "fix:" after it."""
from __future__ import annotations

import json

from tests.support.helpers import GitRepo

# A project's own RULES.md, which `gitmem init` leaves alone: two lines, no `## Proven rules` section.
OWN_RULES = "# House rules\nBe kind.\n"


def test_a_whole_file_problem_is_named_at_the_files_last_line_by_check_status_and_init(memrepo: GitRepo,
                                                                                     cli) -> None:
    """The parser places GM508 after the last line (line 3 of a two-line file). `check` held it to the last
    line; `status` and `init` said RULES.md:3, a line the file does not have, and status ended it with
    "— fix: " and nothing after."""
    memrepo.write("RULES.md", OWN_RULES)
    checked = cli(["check", "--worktree"], cwd=memrepo.path)
    assert checked.code == 1
    assert checked.out.startswith("RULES.md:2: GM508 ")
    data = json.loads(cli(["status", "--json"], cwd=memrepo.path).out)
    assert [(v["path"], v["line"], v["code"]) for v in data["invalid"]] == [("RULES.md", 2, "GM508")]
    shown = [line for line in cli(["status"], cwd=memrepo.path).lines if "GM508" in line]
    assert shown == ["  RULES.md:2: GM508 RULES.md has no `## Proven rules` section"]
    warned = cli(["init"], cwd=memrepo.path).err
    assert "(RULES.md:2: GM508 RULES.md has no `## Proven rules` section)" in warned


def test_blank_lines_at_the_end_count_and_a_missing_final_newline_does_not_add_one(memrepo: GitRepo, cli) -> None:
    """`status` said RULES.md:5 of a file whose last line is 4 (it counted the nothing after the final newline)."""
    for text, line in (("# House rules\nBe kind.\n\n\n", 4), ("# House rules\nBe kind.", 2), ("", 1)):
        memrepo.write("RULES.md", text)
        data = json.loads(cli(["status", "--json"], cwd=memrepo.path).out)
        assert [(v["line"], v["code"]) for v in data["invalid"]] == [(line, "GM508")], text
        assert cli(["check", "--worktree"], cwd=memrepo.path).out.startswith(f"RULES.md:{line}: GM508 "), text
