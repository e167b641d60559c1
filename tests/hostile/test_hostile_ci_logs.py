"""Hostile agents, the CI log: a job's runner acts on what a step prints. A line that starts with `::` is a GitHub
Actions workflow command, and `##[command]` anywhere in a line its older form (as `##vso[...]` is Azure
Pipelines' and `##teamcity[...]` TeamCity's): an agent that gets one into gitmem's output masks words in the rest
of the log (`add-mask`), turns gitmem's own annotations off (`stop-commands`), forges annotations, or sets a later
step's variables. Whatever gitmem prints of memory or of the agent carries none; its own annotations still go."""
from __future__ import annotations

import re
from pathlib import Path

from gitmem.errors import ExitCode
from tests.support.cycle_support import file_at, is_clean
from tests.support.helpers import GitRepo
from tests.support.hostile import GITMEM, command_agent, no_traceback

FORGED = "##[error]forged ##vso[task.setvariable variable=PATH]/tmp/evil ##teamcity[setParameter]"


OWN = re.compile(r"::(?:error|warning|notice) (?:file|title)=")     # gitmem's own, its data escaped (checks/render)


def acted_on(text: str) -> list[str]:
    """The lines of `text` a CI runner would read a command in that is not gitmem's own annotation: `::` first
    after blanks (.NET's TrimStart), or `##<name>[` anywhere in a line that is no workflow command (the runner
    tries that form first and, once it reads one, nothing else on the line)."""
    return [line for line in text.splitlines() if not OWN.match(line)
            and (line.lstrip().startswith("::") or re.search(r"##[A-Za-z]*\[", line))]


def test_the_agents_task_and_stderr_reach_the_ci_log_as_text(tmp_path: Path, memrepo: GitRepo, cli,
                                                             monkeypatch) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    body = (f"sys.stderr.write('::stop-commands::tok\\n##[add-mask]cycle\\n')\n"
            f"subprocess.run([{str(GITMEM)!r}, 'log', 'add', '--task', {FORGED!r}, '--outcome', 'built', "
            f"'--result', '::add-mask::r'], check=True, cwd=root)\n"
            f"subprocess.run([{str(GITMEM)!r}, 'now', 'add', '--did', 'd', '--human', 'nothing', '--next', 'n'], "
            f"check=True, cwd=root)\n")
    command_agent(tmp_path, memrepo, body, write_memory=False)
    result = cli(["cycle"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err
    assert acted_on(result.out + result.err) == []
    assert "forged" in result.out, "the task is still shown, as written"
    assert FORGED in (file_at(memrepo.repo, "HEAD", "LOG.md") or ""), "memory keeps the agent's text as it was"
    assert is_clean(memrepo) and no_traceback(result.err)


def test_a_failing_agents_last_words_reach_the_ci_log_as_text(tmp_path: Path, memrepo: GitRepo, cli,
                                                              monkeypatch) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    command_agent(tmp_path, memrepo, "sys.stderr.write('boom ##[add-mask]cycle\\n::stop-commands::tok\\n')\n"
                                     "sys.exit(3)\n", write_memory=False)
    result = cli(["cycle"], cwd=memrepo.path)
    assert result.code == ExitCode.SALVAGED, result.err
    assert "boom" in result.out + result.err
    assert acted_on(result.out + result.err) == []


def test_memory_lines_shaped_as_commands_are_printed_as_text(memrepo: GitRepo, cli) -> None:
    """A line of memory starts a line of `context`, `cycle --dry-run` and `recall`: the agent wrote it in the
    free text of RULES, which every cycle's prompt holds whole."""
    rules_text = memrepo.read("RULES.md").replace(
        "## Proven rules", "::stop-commands::tok\n  ::add-mask::Proven\n##[error]forged rule\n\n## Proven rules", 1)
    memrepo.commit_files({"RULES.md": rules_text}, "free text shaped as workflow commands")
    for argv in (["context"], ["context", "--json"], ["cycle", "--dry-run"]):
        result = cli(argv, cwd=memrepo.path)
        assert result.code == ExitCode.OK, (argv, result.err)
        assert "forged" in result.out, argv
        assert acted_on(result.out + result.err) == [], argv



def test_json_for_tools_carries_the_text_exactly_and_no_command(memrepo: GitRepo, cli) -> None:
    """A tool reading `--json` compares strings (a path, an id, a line of memory): the runner still reads no command
    in it (`#` is written as its JSON escape), and the decoded strings are exactly what memory holds (a zero-width
    space there would change them)."""
    import json

    rules_text = memrepo.read("RULES.md").replace("## Proven rules", f"{FORGED}\n\n## Proven rules", 1)
    memrepo.commit_files({"RULES.md": rules_text}, "free text shaped as workflow commands")
    result = cli(["context", "--json"], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err
    assert acted_on(result.out) == [] and "##" not in result.out
    assert FORGED in json.dumps(json.loads(result.out), ensure_ascii=False)
    assert "\u200b" not in json.dumps(json.loads(result.out), ensure_ascii=False)
