"""`gitmem cycle` on the command line: exit codes, --dry-run, --json and the GitHub Actions files."""
from __future__ import annotations

import json
from pathlib import Path

from gitmem.errors import ExitCode
from gitmem.scaffold.init import template_dir
from tests.support.cycle_support import head_commit, is_clean
from tests.support.helpers import GitRepo, filled_rules

SCRIPT = """\
cycles:
  1:
    - tool: write_file
      input: {path: notes.md, content: "cycle {{cycle}}\\n"}
    - tool: ask_decision
      input: {title: Publish now?, recommendation: "yes, it is ready"}
    - tool: log_entry
      input: {task: write notes.md, outcome: built, result: notes.md exists}
    - tool: now_block
      input: {did: wrote notes.md, human: answer D-0001, next: publish}
"""


def _scripted(repo: GitRepo) -> None:
    repo.commit_files({
        "agent-script.yaml": SCRIPT,
        "gitmem.yaml": repo.read("gitmem.yaml").replace("  # backend: anthropic",
                                                         "  backend: scripted\n  script: agent-script.yaml"),
    }, "use the scripted agent")


def test_json_and_github_outputs(memrepo: GitRepo, cli, tmp_path: Path, monkeypatch) -> None:
    _scripted(memrepo)
    output, summary = tmp_path / "output", tmp_path / "summary"
    output.write_text("earlier=1\n")
    monkeypatch.setenv("GITHUB_OUTPUT", str(output))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    result = cli(["cycle", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err
    data = json.loads(result.out)
    commit = str(head_commit(memrepo).id)
    assert {k: data[k] for k in ("cycle", "outcome", "task", "commit", "pending")} == {
        "cycle": 1, "outcome": "built", "task": "write notes.md", "commit": commit,
        "pending": ["D-0001 · Publish now?"]}
    assert output.read_text() == f"earlier=1\ncycle=1\noutcome=built\ncommit={commit}\n"
    account = summary.read_text()
    assert account.startswith("### gitmem cycle 1: built\n")
    assert "- Task: write notes.md" in account and "- Decisions waiting: D-0001 · Publish now?" in account
    assert is_clean(memrepo)


def test_dry_run_prints_the_prompt_and_changes_nothing(memrepo: GitRepo, cli) -> None:
    _scripted(memrepo)
    before = memrepo.head()
    memrepo.write("scratch.txt", "a dirty tree does not matter for a dry run\n")
    result = cli(["cycle", "--dry-run"], cwd=memrepo.path)
    assert result.code == ExitCode.OK
    assert "## RULES.md:1-" in result.out and "This is cycle 1." in result.out
    assert memrepo.head() == before
    assert not (memrepo.path / ".git" / "gitmem" / "cycle.lock").exists()


def test_dry_run_with_json_prints_the_prompt_as_one_json_object(memrepo: GitRepo, cli) -> None:
    # --json promises JSON for other tools; a dry run printed the bare prompt, which no JSON reader takes.
    _scripted(memrepo)
    result = cli(["cycle", "--dry-run", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.OK
    shown = json.loads(result.out)
    assert shown["dry_run"] is True and shown["cycle"] == 1 and shown["backend"] == "scripted"
    assert shown["prompt"] == cli(["cycle", "--dry-run"], cwd=memrepo.path).out


def test_dry_run_refuses_a_backend_the_real_cycle_would_refuse(memrepo: GitRepo, cli) -> None:
    # A dry run of `--agent bogus` printed a prompt and exited 0, while the cycle itself exits 2 on that name.
    result = cli(["cycle", "--dry-run", "--agent", "bogus"], cwd=memrepo.path)
    assert result.code == ExitCode.USAGE
    assert "'bogus' is not one of 'anthropic', 'command', 'scripted'" in result.err
    assert result.out == ""


def test_a_dirty_tree_exits_3_listing_files(memrepo: GitRepo, cli) -> None:
    _scripted(memrepo)
    memrepo.write("scratch.txt", "mine\n")
    result = cli(["cycle"], cwd=memrepo.path)
    assert result.code == ExitCode.DIRTY
    assert "untracked: scratch.txt" in result.err
    assert "refused" in result.err


def test_template_placeholders_in_rules_refuse_the_cycle_naming_each_line(memrepo: GitRepo, cli) -> None:
    _scripted(memrepo)
    template = (template_dir() / "RULES.md").read_text(encoding="utf-8")
    memrepo.commit_files({"RULES.md": template}, "RULES as the template has it")
    before = memrepo.head()
    result = cli(["cycle"], cwd=memrepo.path)
    assert result.code == ExitCode.DIRTY
    lines = [n for n, text in enumerate(template.splitlines(), 1) if "<" in text and ">" in text and "<!--" not in text]
    listed = [line.strip().split(": GM717 ")[0] for line in result.err.splitlines() if ": GM717 placeholder" in line]
    assert listed == [f"RULES.md:{n}" for n in lines] and len(lines) == 3
    assert "RULES.md:6: GM717 placeholder <agent name> left" in result.err
    assert memrepo.head() == before and is_clean(memrepo)
    memrepo.commit_files({"RULES.md": filled_rules(template)}, "fill in who the agent is")
    assert cli(["cycle"], cwd=memrepo.path).code == ExitCode.OK


def test_no_backend_chosen_is_a_usage_error(memrepo: GitRepo, cli, monkeypatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    result = cli(["cycle"], cwd=memrepo.path)
    assert result.code == ExitCode.USAGE
    assert "ANTHROPIC_API_KEY" in result.err and "--agent" in result.err


def test_a_failed_cycle_exits_4_and_sets_outputs(memrepo: GitRepo, cli, tmp_path: Path, monkeypatch) -> None:
    memrepo.commit_files({
        "agent-script.yaml": "cycles:\n  1:\n    - tool: write_file\n      input: {path: w.txt, content: x}\n"
                             "    - crash: the model API went away\n",
        "gitmem.yaml": memrepo.read("gitmem.yaml").replace("  # backend: anthropic",
                                                           "  backend: scripted\n  script: agent-script.yaml"),
    })
    output = tmp_path / "output"
    monkeypatch.setenv("GITHUB_OUTPUT", str(output))
    result = cli(["cycle"], cwd=memrepo.path)
    assert result.code == ExitCode.SALVAGED
    assert "the model API went away" in result.err
    assert "work saved on gitmem/salvage/cycle-1" in result.out
    assert output.read_text() == f"cycle=1\noutcome=no-build\ncommit={memrepo.head()}\n"
    assert is_clean(memrepo)
