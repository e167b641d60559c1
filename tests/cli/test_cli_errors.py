"""The top-level error handler: known errors are one clear line, and never echo a secret."""
from __future__ import annotations

import os

import pytest


def test_a_key_pasted_into_config_is_not_echoed(memrepo, cli):
    key = "sk-ant-api03-" + "x" * 40
    memrepo.write("gitmem.yaml", f"limits:\n  now_block_lines: {key}\n")
    result = cli(["check"], cwd=memrepo.path)
    assert result.code == 2
    assert result.err == ("gitmem: gitmem.yaml:2: GM927 limits.now_block_lines: expected a whole number, got '***' "
                          "(text)\n")
    assert key not in result.out + result.err


def test_outside_a_repository_the_message_says_what_to_do(tmp_path, cli, git_env):
    result = cli(["check"], cwd=tmp_path)
    assert result.code == 2
    assert "is not inside a git repository; run `git init` first" in result.err
    assert "Traceback" not in result.err


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a repository to another user")
def test_a_repository_another_user_owns_is_named_so_not_called_no_repository(memrepo, cli):
    """A clone owned by another user (a container running as root over the host's checkout, a shared folder):
    git refuses it ("dubious ownership") and so does libgit2, and every command said the folder is not inside a
    git repository and to run `git init`, in a repository."""
    for top, folders, names in os.walk(memrepo.path):
        for name in [top, *(os.path.join(top, n) for n in folders + names)]:
            os.lchown(name, 65534, 65534)
    for argv in (["status"], ["check"], ["log", "add", "--task", "t", "--outcome", "built", "--result", "r"]):
        result = cli(argv, cwd=memrepo.path)
        assert result.code == 2, (argv, result.err)
        assert "git init" not in result.err and "another user" in result.err, (argv, result.err)
        assert f"git config --global --add safe.directory {memrepo.path}" in result.err, (argv, result.err)


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


# ---- the one error map -------------------------------------------------------------------------------------

def test_a_bug_still_exits_70_with_its_traceback(memrepo, cli, monkeypatch) -> None:
    """Only genuine bugs exit 70: the map never hides one as a usage error."""
    from gitmem.checks import check_and_verify

    def broken(ws):
        raise RuntimeError("an injected bug")

    monkeypatch.setattr(check_and_verify, "check_worktree", broken)
    result = cli(["check", "--worktree"], cwd=memrepo.path)
    assert result.code == 70
    assert "unexpected error; please report it" in result.err and "Traceback" in result.err
    assert "RuntimeError: an injected bug" in result.err


def test_a_refused_write_exits_1_and_lists_its_violations(memrepo, cli, monkeypatch) -> None:
    monkeypatch.setenv("GITMEM_CYCLE", "1")
    assert cli(["log", "add", "--task", "a", "--outcome", "built", "--result", "b"], cwd=memrepo.path).code == 0
    again = cli(["log", "add", "--task", "a", "--outcome", "built", "--result", "b"], cwd=memrepo.path)
    assert again.code == 1
    assert again.err.startswith("gitmem: refusing to write LOG.md") and " GM303 " in again.err


def test_a_missing_git_identity_is_a_configuration_error(memrepo, cli, monkeypatch) -> None:
    """`decision answer` records who answered: without a git identity it exits 2 and says how to set one."""
    memrepo.repo.config.delete_multivar("user.name", ".*")
    memrepo.repo.config.delete_multivar("user.email", ".*")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    assert cli(["decision", "ask", "--title", "Q?", "--recommendation", "yes"], cwd=memrepo.path).code == 0
    result = cli(["decision", "answer", "D-0001", "--answer", "yes"], cwd=memrepo.path)
    assert result.code == 2
    assert result.err == "gitmem: set your git identity first: git config user.name / user.email\n"


def test_a_refused_cycle_is_a_gm7xx_violation_for_machines(memrepo, cli, monkeypatch) -> None:
    """People read the refusal; `--json` and GitHub annotations carry it as a violation with its code."""
    memrepo.commit_files({"gitmem.yaml": "agent:\n  backend: command\n  command: 'true'\n"}, "a command agent")
    memrepo.write("stray.txt", "uncommitted\n")
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    result = cli(["cycle", "--json"], cwd=memrepo.path)
    assert result.code == 3
    lines = result.out.splitlines()
    import json

    data = json.loads(lines[0])
    assert [v["code"] for v in data["violations"]] == ["GM704"]
    assert data["violations"][0]["slug"] == "cycle-dirty-tree" and "stray.txt" in data["violations"][0]["message"]
    assert lines[1].startswith("::error file=stray.txt,line=1,title=GM704 cycle-dirty-tree::the work tree has")


def test_a_refused_close_is_a_gm8xx_violation_in_json(memrepo, cli) -> None:
    import json

    result = cli(["close", "--date", "2199-12-31", "--no-llm", "--json"], cwd=memrepo.path)
    assert result.code == 2          # a day that has not happened is a wrong argument, as any other
    data = json.loads(result.out)
    assert [v["code"] for v in data["violations"]] == ["GM801"]
    assert result.err.startswith("gitmem: 2199-12-31 has not happened yet")


def test_a_refused_cycle_is_worded_by_the_error_map_and_never_echoes_a_key(memrepo, cli) -> None:
    """`gitmem cycle` raised its refusal to the error map instead of printing it: a key-shaped file name in the
    dirty-tree listing used to reach stderr unmasked, while every other error goes through the map's masking."""
    key = "sk-ant-api03-" + "x" * 40
    memrepo.commit_files({"gitmem.yaml": "agent:\n  backend: command\n  command: 'true'\n"}, "a command agent")
    memrepo.write(f"{key}.txt", "uncommitted\n")
    result = cli(["cycle"], cwd=memrepo.path)
    assert result.code == 3
    assert result.err.startswith("gitmem: cycle: refused: the work tree has uncommitted changes")
    assert "untracked: ***.txt" in result.err
    assert key not in result.out + result.err


def test_every_kind_of_command_error_has_the_one_prefix(memrepo, cli, tmp_path, git_env) -> None:
    """click's own errors said `Error: …`, the cycle `gitmem cycle: …`, the rest `gitmem: …`: now each ends in
    one line starting `gitmem: `, and a usage error keeps click's usage line and hint above it."""
    memrepo.commit_files({"gitmem.yaml": "agent:\n  backend: command\n  command: 'true'\n"}, "a command agent")
    memrepo.write("stray.txt", "uncommitted\n")
    cases = {
        ("stauts",): "gitmem: No such command 'stauts'. Did you mean 'status'?",
        ("check", "--bogus"): "gitmem: No such option '--bogus'.",
        ("log", "add", "--task", "t", "--result", "r", "--outcome", "nope"): "gitmem: Invalid value for '--outcome'",
        ("close", "--date", "yesterday"): "gitmem: Invalid value for '--date': 'yesterday' is not a YYYY-MM-DD date",
        ("cycle",): "gitmem: cycle: refused: the work tree has uncommitted changes",
    }
    for argv, first in cases.items():
        result = cli(list(argv), cwd=memrepo.path)
        assert result.code in (2, 3), result.err
        lines = [line for line in result.err.splitlines() if line]
        assert not any(line.startswith("Error") for line in lines), result.err
        assert lines[-1 if result.code == 2 else 0].startswith(first), result.err
    usage = cli(["check", "--bogus"], cwd=memrepo.path).err.splitlines()
    assert usage[:2] == ["Usage: gitmem check [OPTIONS]", "Try 'gitmem check -h' for help."]
    outside = cli(["status"], cwd=tmp_path)
    assert outside.err.startswith("gitmem: ") and outside.code == 2


@pytest.mark.parametrize("given", ["abc", "0", "-3", "1.5", "٣", "9" * 19])
def test_a_cycle_number_in_the_environment_that_is_none_is_an_error_not_ignored(memrepo, cli, monkeypatch,
                                                                               given: str) -> None:
    """`GITMEM_CYCLE=abc` was ignored: the entry was numbered as a session's, silently, while whoever set it meant a
    cycle. Set to anything but a cycle number, it stops the write (exit 2) and says what it must be."""
    monkeypatch.setenv("GITMEM_CYCLE", given)
    before = memrepo.read("LOG.md")
    result = cli(["log", "add", "--task", "a", "--outcome", "built", "--result", "b"], cwd=memrepo.path)
    assert result.code == 2, (result.out, result.err)
    assert "GITMEM_CYCLE=" in result.err and "is not a cycle number (a whole number from 1)" in result.err
    assert memrepo.read("LOG.md") == before
    monkeypatch.setenv("GITMEM_CYCLE", " ")             # set but empty: no cycle, as unset
    assert cli(["log", "add", "--task", "a", "--outcome", "built", "--result", "b"], cwd=memrepo.path).code == 0


def test_blocked_names_only_decisions_still_waiting(memrepo, cli, monkeypatch) -> None:
    """`--blocked D-9999` was accepted: docs/format.md says Blocked names the pending decisions the cycle waits on,
    and the close plans around them. An ID DECISIONS.md does not hold as waiting (none, a typo, one answered)
    is refused, the file untouched; a pending one is written."""
    monkeypatch.setenv("GITMEM_CYCLE", "1")
    asked = cli(["decision", "ask", "--title", "Ship it?", "--recommendation", "yes"], cwd=memrepo.path)
    assert asked.code == 0, asked.err
    before = memrepo.read("LOG.md")
    refused = cli(["log", "add", "--task", "a", "--outcome", "no-build", "--result", "waiting",
                   "--blocked", "D-0001, D-9999"], cwd=memrepo.path)
    assert refused.code == 1, (refused.out, refused.err)
    assert "--blocked names D-9999, which no pending decision in DECISIONS.md is (waiting on the human: D-0001)" \
        in refused.err
    assert memrepo.read("LOG.md") == before
    done = cli(["log", "add", "--task", "a", "--outcome", "no-build", "--result", "waiting", "--blocked", "D-0001"],
               cwd=memrepo.path)
    assert done.code == 0, done.err
    assert "- Blocked: D-0001\n" in memrepo.read("LOG.md")
