"""The top-level error handler: known errors are one clear line, and never echo a secret."""
from __future__ import annotations


def test_a_key_pasted_into_config_is_not_echoed(memrepo, cli):
    key = "sk-ant-api03-" + "x" * 40
    memrepo.write("gitmem.yaml", f"limits:\n  now_block_lines: {key}\n")
    result = cli(["check"], cwd=memrepo.path)
    assert result.code == 2
    assert result.err == "gitmem: gitmem.yaml:2: limits.now_block_lines: expected int, got '[redacted]'\n"
    assert key not in result.out + result.err


def test_outside_a_repository_the_message_says_what_to_do(tmp_path, cli, git_env):
    result = cli(["check"], cwd=tmp_path)
    assert result.code == 2
    assert "is not inside a git repository; run `git init` first" in result.err
    assert "Traceback" not in result.err


def test_check_uses_the_staged_config_not_the_work_tree_one(memrepo, cli):
    block = "\n".join(f"- Did: step {n}" for n in range(12))
    memrepo.write("NOW.md", memrepo.read("NOW.md") + f"\n## 2026-11-30 09:00 UTC · cycle 1\n{block}\n")
    memrepo.write("gitmem.yaml", "limits:\n  now_block_lines: 20\n")
    memrepo.stage("NOW.md", "gitmem.yaml")
    assert cli(["check"], cwd=memrepo.path).code == 0
    memrepo.write("gitmem.yaml", "limits:\n  now_block_lines: 5\n")   # unstaged: must not matter
    assert cli(["check"], cwd=memrepo.path).code == 0
    memrepo.stage("gitmem.yaml")
    result = cli(["check"], cwd=memrepo.path)
    assert result.code == 1 and " GM101 " in result.out


RULES_WITH_RETIRED = """# RULES

## Proven rules
- R-02 · Read Resolved before acting (human)

## Retired
- R-01 · Read Pending only (superseded by R-02 on 2026-10-10)
"""


def test_deleting_a_retired_rule_is_gm505(memrepo, cli):
    memrepo.commit_files({"RULES.md": RULES_WITH_RETIRED}, "rules")
    memrepo.write("RULES.md", RULES_WITH_RETIRED.replace(
        "- R-01 · Read Pending only (superseded by R-02 on 2026-10-10)\n", ""))
    memrepo.stage("RULES.md")
    result = cli(["check"], cwd=memrepo.path)
    assert result.code == 1
    assert result.lines[0].startswith("RULES.md:6: GM505 retired rule R-01 was deleted")
