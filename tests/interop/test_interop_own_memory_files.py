"""gitmem's own memory files are never a source's facts: a source whose place holds them (Cline's `memory-bank`
made gitmem's `memory_dir`, a `--from` the repository, CLAUDE.md made a workspace's RULES) reads around them."""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.interop.test_interop_import import home  # noqa: F401 (fixture)
from tests.support.helpers import CliResult, GitRepo

Cli = Callable[..., CliResult]


def texts(result: CliResult) -> list[str]:
    assert result.code == 0, result.err
    data = json.loads(result.out)
    return [item["text"] for item in (*data["lessons"], *data["proposals"])]


def test_a_memory_bank_that_is_gitmems_memory_dir_gives_only_clines_facts(memrepo: GitRepo, cli: Cli) -> None:
    config = memrepo.read("gitmem.yaml").replace("memory_dir: .", "memory_dir: memory-bank")
    memrepo.commit_files({"gitmem.yaml": config}, "memory in memory-bank")
    assert cli(["init"], cwd=memrepo.path).code == 0
    memrepo.write("memory-bank/techContext.md", "- The API is REST over HTTP/2\n")
    assert texts(cli(["import", "cline", "--dry-run", "--json"], cwd=memrepo.path)) == [
        "The API is REST over HTTP/2"]
    # A folder holding gitmem's memory and nothing else is no source.
    (memrepo.path / "memory-bank" / "techContext.md").unlink()
    assert cli(["import", "cline", "--dry-run"], cwd=memrepo.path).code == 2


def test_another_workspaces_rules_file_is_not_a_note(memrepo: GitRepo, cli: Cli, home: Path) -> None:  # noqa: F811
    config = memrepo.read("gitmem.yaml") + ("\nworkspaces:\n  docs:\n    memory_dir: .\n    files:\n"
                                            "      now: DOCS-NOW.md\n      decisions: DOCS-DECISIONS.md\n"
                                            "      log: DOCS-LOG.md\n      lessons: DOCS-LESSONS.md\n"
                                            "      rules: CLAUDE.md\n")
    memrepo.commit_files({"gitmem.yaml": config}, "a workspace whose RULES is CLAUDE.md")
    memrepo.write("CLAUDE.md", "# Rules\n\n- R-01 · the docs agent's own rule\n")
    memrepo.write("AGENTS.md", "- Use pnpm, not npm\n")
    assert texts(cli(["import", "notes", "--dry-run", "--json"], cwd=memrepo.path)) == ["Use pnpm, not npm"]


def test_from_the_repository_itself_reads_none_of_its_memory(memrepo: GitRepo, cli: Cli) -> None:
    memrepo.write("productContext.md", "- Users are small teams\n")
    result = cli(["import", "cline", "--from", str(memrepo.path), "--dry-run", "--json"], cwd=memrepo.path)
    assert result.code == 0, result.err
    data = json.loads(result.out)
    read = {Path(item["file"]).name for item in (*data["lessons"], *data["proposals"], *data["skipped"])}
    assert "productContext.md" in read
    assert not read & {"NOW.md", "DECISIONS.md", "LOG.md", "LESSONS.md", "RULES.md", "ROADMAP.md"}
