"""Hostile inputs, class 2: gitmem.yaml is data an agent or a careless edit can attack.

Every bad config is refused with exit 2 and one line naming gitmem.yaml's line and key, by every command, and
before anything is written. `check` and `verify` read each side of a change with that side's own config, and a
role moved to another file must carry the old file's content (GM922).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from gitmem.config import ConfigError, _full_config, _plain_config, parse_config
from tests.support.builders import LOG_BASE, decisions_md, log_entry, pending, resolved
from tests.support.helpers import AGENT, HUMAN, GitRepo
from tests.support.hostile import changed, one_line_error, picture, refused

# (name, gitmem.yaml text, the line reported, text the message holds)
BAD_CONFIGS = [
    ("memory-dir-git-hooks", "memory_dir: .git/hooks\nfiles:\n  now: pre-commit\n", 1, "inside .git"),
    ("memory-dir-git", "memory_dir: .git\n", 1, "inside .git"),
    ("memory-dir-git-upper", "memory_dir: .GIT\n", 1, "inside .git"),
    ("memory-dir-git-mixed-nested", "memory_dir: sub/.Git/x\n", 1, "inside .git"),
    ("memory-dir-git-trailing-dot", "memory_dir: '.git.'\n", 1, "inside .git"),
    ("memory-dir-git-short-name", "memory_dir: GIT~1\n", 1, "inside .git"),
    ("memory-dir-git-zero-width", 'memory_dir: ".g\\u200cit"\n', 1, "invisible"),
    ("memory-dir-parent", "memory_dir: ../outside\n", 1, "inside the repository"),
    ("memory-dir-deep-parent", "memory_dir: a/../../b\n", 1, "inside the repository"),
    ("memory-dir-absolute", "memory_dir: /tmp/elsewhere\n", 1, "inside the repository"),
    ("memory-dir-backslashes", "memory_dir: 'a\\..\\..'\n", 1, "inside the repository"),
    ("memory-dir-drive", "memory_dir: 'C:'\n", 1, "inside the repository"),
    ("memory-dir-nul", 'memory_dir: "a\\0b"\n', 1, "control"),
    ("files-duplicate-role", "files:\n  now: LOG.md\n", 2, "both name"),
    ("files-duplicate-role-case", "files:\n  now: notes.md\n  decisions: NOTES.md\n", 2, "both name"),
    ("files-duplicate-in-workspace", "workspaces:\n  w:\n    files:\n      lessons: R.md\n      rules: R.md\n", 4,
     "both name"),
    ("files-newline", 'files:\n  log: "LO\\nG.md"\n', 2, "control"),
    ("files-nul", 'files:\n  log: "LO\\0G.md"\n', 2, "control"),
    ("files-escape", 'files:\n  log: "\\e[2JLOG.md"\n', 2, "control"),
    ("files-bidi", 'files:\n  log: "LOG\\u202e.md"\n', 2, "invisible"),
    ("files-config-itself", "files:\n  now: gitmem.yaml\n", 2, "gitmem.yaml"),
    ("files-config-itself-case", "files:\n  now: GitMem.YAML\n", 2, "gitmem.yaml"),
    ("files-separator", "files:\n  now: ../../x.md\n", 2, "plain file name"),
    ("files-backslash", "files:\n  now: '..\\x.md'\n", 2, "plain file name"),
    ("files-too-long", f"files:\n  now: {'x' * 300}.md\n", 2, "bytes"),
    ("files-hidden", "files:\n  now: .bashrc\n", 2, "plain file name"),
    ("score-nan", "recall:\n  min_score: .nan\n", 2, "finite"),
    ("gap-inf", "recall:\n  gap: .inf\n", 2, "finite"),
    ("weight-minus-inf", "recall:\n  recency_weight: -.inf\n", 2, "negative"),
    ("score-over-one", "recall:\n  min_score: 7.5\n", 2, "at most 1"),
    ("half-life-huge", "recall:\n  recency_half_life_days: 1.0e+300\n", 2, "at most"),
    ("recall-limit-huge", "recall:\n  limit: 100000000000000000000000000\n", 2, "at most 1000"),
    ("ranker-nan", "recall:\n  rankers:\n    bm25: .nan\n", 2, "finite"),
    ("ranker-huge", "recall:\n  rankers:\n    bm25: 1.0e+308\n", 2, "at most"),
    ("timeout-overflow", "cycle:\n  timeout: 1.0e+400\n", 2, "expected a whole number, got inf (no finite number)"),
    ("timeout-huge", "cycle:\n  timeout: 99999999999999\n", 2, "at most 604800"),
    ("shell-timeout-zero", "agent:\n  shell:\n    timeout: 0\n", 3, "at least 1"),
    ("max-turns-huge", "cycle:\n  max_turns: 1000000000\n", 2, "at most"),
    ("max-tokens-huge", "cycle:\n  max_tokens: 10000000000000\n", 2, "at most"),
    ("context-tokens-zero", "cycle:\n  max_context_tokens: 0\n", 2, "at least 1"),
    ("retries-huge", "agent:\n  max_retries: 1000000\n", 2, "at most 20"),
    ("grep-lines-huge", "limits:\n  grep_over_lines: 1000000000000\n", 2, "at most"),
    ("confirmations-huge", "close:\n  confirmations: 1000000\n", 2, "at most 100"),
    ("confirmations-zero", "close:\n  confirmations: 0\n", 2, "at least 1"),
    ("agent-name-newline", 'agent:\n  name: "Orla\\nSigned-off-by: x"\n', 2, "control"),
    ("agent-email-line-separator", 'agent:\n  email: "a\\u2028b@x"\n', 2, "control"),
    ("priority-escape", 'cycle:\n  priorities: ["\\e[2J build"]\n', 2, "control"),
    ("workspace-name-slash", "workspaces:\n  ../w:\n    memory_dir: w\n", 2, "workspaces"),
    ("workspace-git-dir", "workspaces:\n  w:\n    memory_dir: agents/.git\n", 3, "inside .git"),
]


def _write_config(repo: GitRepo, text: str) -> None:
    repo.write("gitmem.yaml", text)


@pytest.mark.parametrize(("name", "text", "line", "says"), BAD_CONFIGS, ids=[c[0] for c in BAD_CONFIGS])
def test_bad_config_exits_2_naming_the_line(memrepo: GitRepo, cli, name: str, text: str, line: int,
                                            says: str) -> None:
    _write_config(memrepo, text)
    message = one_line_error(cli(["check", "--worktree"], cwd=memrepo.path))
    assert message.startswith(f"gitmem: gitmem.yaml:{line}: "), message
    assert says in message, message


@pytest.mark.parametrize(("name", "text", "line", "says"), BAD_CONFIGS[:14] + BAD_CONFIGS[16:22],
                         ids=[c[0] for c in BAD_CONFIGS[:14] + BAD_CONFIGS[16:22]])
def test_bad_config_writes_nothing_anywhere(memrepo: GitRepo, cli, tmp_path: Path, name: str, text: str,
                                            line: int, says: str) -> None:
    _write_config(memrepo, text)
    before, outside = picture(memrepo.path), picture(tmp_path)
    one_line_error(cli(["now", "add", "--did", "x", "--human", "y", "--next", "z"], cwd=memrepo.path))
    one_line_error(cli(["log", "add", "--task", "x", "--outcome", "built", "--result", "y"], cwd=memrepo.path))
    assert changed(before, picture(memrepo.path)) == set()
    assert changed(outside, picture(tmp_path)) == set()
    assert not (memrepo.path / ".git" / "hooks" / "pre-commit").exists()


@pytest.mark.parametrize(("name", "text", "line", "says"), BAD_CONFIGS, ids=[c[0] for c in BAD_CONFIGS])
def test_both_readers_refuse_the_same(name: str, text: str, line: int, says: str) -> None:
    # The plain reader never accepts what validation refuses; ruamel.yaml then gives the line.
    assert _plain_config(text, "gitmem.yaml") is None
    with pytest.raises(ConfigError) as full:
        _full_config(text, "gitmem.yaml")
    with pytest.raises(ConfigError) as either:
        parse_config(text.encode())
    assert str(full.value) == str(either.value)


@pytest.mark.parametrize(("text", "where", "value"), [
    ("recall:\n  limit: 2000\n", "recall.limit", 2000),
    ("limits:\n  now_block_lines: 5000\n", "limits.now_block_lines", 5000),
    ("files:\n  now: LOG.md\n", "files.now", "LOG.md"),
    ("cycle:\n  timeout: 99999999\n", "cycle.timeout", 99999999),
    ('agent:\n  name: "a\\tb"\n', "agent.name", "a\tb"),
])
def test_a_config_from_history_is_read_by_the_rules_it_was_written_under(text: str, where: str,
                                                                          value: object) -> None:
    with pytest.raises(ConfigError):
        parse_config(text.encode())
    lenient = parse_config(text.encode(), strict=False)
    assert lenient is not None
    found: object = lenient
    for attribute in where.split("."):
        found = getattr(found, attribute)
    assert found == value, "read as written, not replaced by a default"


def test_the_plain_reader_and_ruamel_agree_on_a_valid_config() -> None:
    text = "memory_dir: mem\nrecall:\n  limit: 1000\n  min_score: 1.0\ncycle:\n  timeout: 604800\n"
    assert _plain_config(text, "gitmem.yaml") == _full_config(text, "gitmem.yaml")


# -- each side with its own config ----------------------------------------------------------------------

def _remap(memrepo: GitRepo, yaml_edit: tuple[str, str], files: dict[str, str | bytes | None]) -> None:
    text = memrepo.read("gitmem.yaml").replace(*yaml_edit)
    memrepo.stage_files({"gitmem.yaml": text, **files})


def test_remapping_log_to_a_new_file_without_its_content_is_refused(memrepo: GitRepo, cli) -> None:
    memrepo.commit_files({"LOG.md": LOG_BASE + log_entry(10, 2)})
    _remap(memrepo, ("log: LOG.md", "log: JOURNAL.md"), {"LOG.md": None, "JOURNAL.md": LOG_BASE})
    result = refused(cli(["check"], cwd=memrepo.path), 1)
    assert "JOURNAL.md:1: GM922 gitmem.yaml now maps log to JOURNAL.md instead of LOG.md" in result.out
    assert "GM301" in result.out
    memrepo.commit("remap", author=HUMAN)
    result = refused(cli(["verify", "--range", "HEAD~1..HEAD"], cwd=memrepo.path), 1)
    assert "GM922" in result.out and "GM301" in result.out


def test_remapping_with_the_content_moved_passes(memrepo: GitRepo, cli) -> None:
    memrepo.commit_files({"LOG.md": LOG_BASE + log_entry(10, 2)})
    _remap(memrepo, ("log: LOG.md", "log: JOURNAL.md"), {"LOG.md": None, "JOURNAL.md": LOG_BASE + log_entry(10, 2)
                                                         + log_entry(11, 3)})
    assert cli(["check"], cwd=memrepo.path).code == 0
    memrepo.commit("remap", author=HUMAN)
    assert cli(["verify", "--range", "HEAD~1..HEAD"], cwd=memrepo.path).code == 0


def test_remapping_decisions_may_not_lose_a_decision(memrepo: GitRepo, cli) -> None:
    memrepo.commit_files({"DECISIONS.md": decisions_md(pending(1), resolved(2))})
    _remap(memrepo, ("decisions: DECISIONS.md", "decisions: ASK.md"),
           {"DECISIONS.md": None, "ASK.md": decisions_md(pending(1))})
    result = refused(cli(["check"], cwd=memrepo.path), 1)
    assert "ASK.md:1: GM922" in result.out and "GM206" in result.out and "GM205" in result.out


def test_moving_memory_dir_without_the_files_is_refused(memrepo: GitRepo, cli) -> None:
    memrepo.commit_files({"LOG.md": LOG_BASE})
    names = ["NOW.md", "DECISIONS.md", "LOG.md", "LESSONS.md", "RULES.md"]
    _remap(memrepo, ("memory_dir: .", "memory_dir: mem"), {f"mem/{name}": f"# {name[:-3]}\n" for name in names})
    result = refused(cli(["check"], cwd=memrepo.path), 1)
    assert "mem/LOG.md:1: GM922" in result.out


def test_moving_memory_dir_with_the_files_passes(memrepo: GitRepo, cli) -> None:
    names = ["NOW.md", "DECISIONS.md", "LOG.md", "LESSONS.md", "RULES.md", "ROADMAP.md"]
    moved: dict[str, str | bytes | None] = {f"mem/{name}": (memrepo.path / name).read_bytes() for name in names}
    moved.update({name: None for name in names})
    _remap(memrepo, ("memory_dir: .", "memory_dir: mem"), moved)
    assert cli(["check"], cwd=memrepo.path).code == 0


def test_swapping_two_roles_with_their_files_passes(memrepo: GitRepo, cli) -> None:
    now_text, log_text = memrepo.read("NOW.md"), memrepo.read("LOG.md")
    text = memrepo.read("gitmem.yaml").replace("now: NOW.md", "now: TMP.md").replace("log: LOG.md", "log: NOW.md")
    memrepo.stage_files({"gitmem.yaml": text.replace("now: TMP.md", "now: LOG.md"), "NOW.md": log_text,
                         "LOG.md": now_text})
    assert cli(["check"], cwd=memrepo.path).code == 0


def test_an_agent_cannot_change_its_own_email_to_resolve(memrepo: GitRepo, cli, monkeypatch) -> None:
    memrepo.commit_files({"DECISIONS.md": decisions_md(pending(1))})
    text = memrepo.read("gitmem.yaml").replace("email: agent@gitmem.invalid", "email: other@gitmem.invalid")
    memrepo.stage_files({"gitmem.yaml": text, "DECISIONS.md": decisions_md(resolved=resolved(1))})
    monkeypatch.setenv("GIT_AUTHOR_NAME", AGENT[0])
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", AGENT[1])
    result = refused(cli(["check"], cwd=memrepo.path), 1)
    assert "GM207" in result.out
    memrepo.commit("resolve", author=AGENT)
    assert "GM207" in refused(cli(["verify", "--range", "HEAD~1..HEAD"], cwd=memrepo.path), 1).out


def test_a_legacy_config_in_head_does_not_fail_a_change_that_fixes_it(memrepo: GitRepo, cli) -> None:
    # Committed before this release's bounds (without the hook): the change that fixes it is judged strictly,
    # HEAD's side by the rules it was written under.
    memrepo.write("gitmem.yaml", memrepo.read("gitmem.yaml") + "recall:\n  limit: 5000\n")
    memrepo.stage("gitmem.yaml")
    memrepo.commit("legacy", author=HUMAN)
    memrepo.stage_files({"gitmem.yaml": memrepo.read("gitmem.yaml").replace("limit: 5000", "limit: 50"),
                         "LOG.md": memrepo.read("LOG.md") + log_entry(10, 1)})
    assert cli(["check"], cwd=memrepo.path).code == 0
    memrepo.commit("fix", author=HUMAN)
    assert cli(["verify", "--range", "HEAD~1..HEAD"], cwd=memrepo.path).code == 0
    # A commit that brings a bad value is refused in verify with the commit and the line.
    good = memrepo.read("gitmem.yaml")
    memrepo.commit_files({"gitmem.yaml": good.replace("limit: 50", "limit: 9999")})
    message = one_line_error(cli(["check", "--worktree"], cwd=memrepo.path))
    assert message.startswith("gitmem: gitmem.yaml:") and "recall.limit: must be at most 1000" in message
    memrepo.write("gitmem.yaml", good)         # the work tree's config is fine; the commit's is not
    message = one_line_error(cli(["verify", "--range", "HEAD~1..HEAD"], cwd=memrepo.path))
    assert message.startswith("gitmem: gitmem.yaml:") and "recall.limit" in message and "(commit " in message


def test_an_unreadable_config_in_head_does_not_block_its_fix(memrepo: GitRepo, cli) -> None:
    memrepo.commit_files({"gitmem.yaml": "files: [\n"}, "broken, unchecked")
    memrepo.stage_files({"gitmem.yaml": "timezone: UTC\n", "LOG.md": memrepo.read("LOG.md") + log_entry(10, 1)})
    assert cli(["check"], cwd=memrepo.path).code == 0


def test_adopting_gitmem_beside_a_projects_own_log_is_no_remap(memrepo: GitRepo, cli) -> None:
    names = ["NOW.md", "DECISIONS.md", "LOG.md", "LESSONS.md", "RULES.md"]
    files: dict[str, str | bytes | None] = {f"AGENT_{n}": (memrepo.path / n).read_bytes() for n in names}
    memrepo.commit_files({"gitmem.yaml": None, "LOG.md": "# Changelog of the project\n\n- 1.0: first\n"}, "before")
    files["gitmem.yaml"] = "files:\n" + "".join(f"  {n[:-3].lower()}: AGENT_{n}\n" for n in names)
    memrepo.stage_files(files)
    result = cli(["check"], cwd=memrepo.path)
    assert result.code == 0, result.out


def test_a_workspace_added_in_the_commit_is_all_new(memrepo: GitRepo, cli) -> None:
    names = ["NOW.md", "DECISIONS.md", "LOG.md", "LESSONS.md", "RULES.md"]
    files: dict[str, str | bytes | None] = {f"w/{n}": (memrepo.path / n).read_bytes() for n in names}
    files["gitmem.yaml"] = memrepo.read("gitmem.yaml") + "workspaces:\n  w:\n    memory_dir: w\n"
    memrepo.stage_files(files)
    assert cli(["check", "--workspace", "w"], cwd=memrepo.path).code == 0
