"""`gitmem import SOURCE`: each source format read into open lessons and one decision per batch, in a real repo.

The fixtures follow each CLI's public docs or source, named beside them:
- Claude Code auto memory: code.claude.com/docs/en/memory ("Auto memory": `~/.claude/projects/<project>/memory/`,
  a MEMORY.md index of one-line pointers, topic files); the four memory types user, feedback, project, reference
  and a feedback memory's `**Why:**` / `**How to apply:**` lines, with `type` at the top or under `metadata:`.
- Codex: openai/codex codex-rs/core/templates/memories/read_path.md ("Memory layout": memory_summary.md,
  MEMORY.md, rollout_summaries/) and consolidation.md (raw_memories.md).
- Gemini CLI: google-gemini/gemini-cli docs/tools/memory.md (`save_memory` appends bullets under
  `## Gemini Added Memories` in ~/.gemini/GEMINI.md).
- Cline: docs.cline.bot "Memory Bank" (memory-bank/projectbrief.md, activeContext.md, progress.md, …).
- Agent Memory Repo: MEMORY.md with `## Index`, one-line entries `[source: …; added: YYYY-MM-DD]`, `[[path]]` links.
"""
from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from gitmem.checks.violation import Violation
from gitmem.interop.claude_code import project_dir_name
from tests.support.helpers import CliResult, GitRepo

Cli = Callable[..., CliResult]
DAY = 1_793_000_000          # 2026-10-26 UTC: the day the source files say they were written
TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"

FEEDBACK = """---
name: real-database
description: integration tests hit a real database
type: feedback
---
Integration tests must hit a real database, not mocks.
**Why:** mocked tests passed but the production migration failed
**How to apply:** every test that touches the database
"""
USER = """---
name: role
description: the user's role
metadata:
  type: user
---
The user is a data scientist investigating logging.
"""
INDEX = """# Memory
- [Real database](feedback_real-database.md) — integration tests hit a real database
- [Role](user_role.md) — data scientist
- The release branch is cut on Thursdays
"""


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    place = tmp_path / "home"
    place.mkdir()
    monkeypatch.setenv("HOME", str(place))
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME"):
        monkeypatch.delenv(name, raising=False)
    return place


def claude_dir(home: Path, repo: GitRepo) -> Path:
    return home / ".claude" / "projects" / project_dir_name(repo.path) / "memory"


def put(where: Path, files: dict[str, str | bytes]) -> None:
    for rel, content in files.items():
        target = where / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
        os.utime(target, (DAY, DAY))


def memory(repo: GitRepo) -> tuple[str, str]:
    return repo.read("LESSONS.md"), repo.read("DECISIONS.md")


def commit_all(repo: GitRepo) -> None:
    repo.stage("LESSONS.md", "DECISIONS.md")
    repo.commit("import")


def test_claude_project_dir_is_named_from_the_path_as_claude_code_names_it(tmp_path: Path) -> None:
    # Claude Code: every character of the absolute path other than a letter or digit becomes `-`.
    assert project_dir_name(Path("/home/ana/my.app_v2")) == "-home-ana-my-app-v2"


def test_claude_feedback_lands_as_an_open_lesson_and_the_rest_as_one_decision(memrepo: GitRepo, cli: Cli,
                                                                              home: Path) -> None:
    put(claude_dir(home, memrepo), {"MEMORY.md": INDEX, "feedback_real-database.md": FEEDBACK,
                                    "user_role.md": USER})
    result = cli(["import", "claude"], cwd=memrepo.path)
    assert result.code == 0, result.err
    lessons, decisions = memory(memrepo)
    assert "## L-0001 · Integration tests must hit a real database, not mocks" in lessons
    assert "- Why: mocked tests passed but the production migration failed" in lessons
    assert "How to apply: every test that touches the database" in lessons
    assert re.search(r"- Origin: claude · ~/\.claude/projects/\S+/memory/feedback_real-database\.md:6 · written "
                     r"2026-10-26 · key [0-9a-f]{12} · as real-database", lessons)
    assert "- Status: open" in lessons and "Confirmed" not in lessons
    pending = decisions.split("## Resolved")[0]
    assert "### D-0001 · Accept 3 facts imported from claude" in pending
    assert "P1: The release branch is cut on Thursdays (origin: claude · " in pending
    assert "P2: The user is a data scientist investigating logging. (origin: claude · " in pending
    assert "Lessons added, open until two later cycles confirm each: L-0001." in pending
    # index lines that point at a topic file are that file's entry, not facts of their own
    assert "Real database](" not in decisions
    assert cli(["check", "--worktree"], cwd=memrepo.path).code == 0


def test_reimporting_the_same_source_adds_nothing(memrepo: GitRepo, cli: Cli, home: Path) -> None:
    put(claude_dir(home, memrepo), {"MEMORY.md": INDEX, "feedback_real-database.md": FEEDBACK,
                                    "user_role.md": USER})
    assert cli(["import", "claude"], cwd=memrepo.path).code == 0
    commit_all(memrepo)
    before = memory(memrepo)
    again = cli(["import", "claude"], cwd=memrepo.path)
    assert again.code == 0
    assert "Nothing new to import." in again.out
    assert "skipped, already imported (L-0001)" in again.out
    assert memory(memrepo) == before


def test_an_edited_topic_file_supersedes_its_lesson_instead_of_duplicating_it(memrepo: GitRepo, cli: Cli,
                                                                            home: Path) -> None:
    where = claude_dir(home, memrepo)
    put(where, {"feedback_real-database.md": FEEDBACK})
    assert cli(["import", "claude"], cwd=memrepo.path).code == 0
    commit_all(memrepo)
    put(where, {"feedback_real-database.md": FEEDBACK.replace("not mocks", "never mocks or fakes")})
    result = cli(["import", "claude"], cwd=memrepo.path)
    assert result.code == 0, result.err
    assert "supersedes L-0001" in result.out
    lessons, _ = memory(memrepo)
    assert lessons.count("## L-") == 2
    assert "- Replaces: L-0001 (its text was edited in claude)" in lessons
    assert "- Status: retired — superseded by L-0002: its text was edited in claude" in lessons
    assert cli(["check", "--worktree"], cwd=memrepo.path).code == 0


def test_an_edited_gemini_bullet_supersedes_its_proposal(memrepo: GitRepo, cli: Cli, home: Path) -> None:
    put(home / ".gemini", {"GEMINI.md": "# Mine\n\n## Gemini Added Memories\n- My preferred language is Python.\n"
                                        "- The project I'm working on is called 'gemini-cli'.\n"})
    assert cli(["import", "gemini"], cwd=memrepo.path).code == 0
    commit_all(memrepo)
    put(home / ".gemini", {"GEMINI.md": "# Mine\n\n## Gemini Added Memories\n- My preferred language is Python 3.\n"
                                        "- The project I'm working on is called 'gemini-cli'.\n"})
    result = cli(["import", "gemini"], cwd=memrepo.path)
    assert result.code == 0, result.err
    _, decisions = memory(memrepo)
    assert "### D-0002 · Accept 1 fact imported from gemini" in decisions
    assert re.search(r"P1: My preferred language is Python 3\. \(origin: gemini · ~/\.gemini/GEMINI\.md:4 · [^)]*\) "
                     r"— replaces D-0001 P1", decisions)


def test_secrets_in_imported_text_are_masked(memrepo: GitRepo, cli: Cli, home: Path) -> None:
    put(home / ".gemini", {"GEMINI.md": f"## Gemini Added Memories\n- The deploy token is {TOKEN}\n"})
    dry = cli(["import", "gemini", "--dry-run", "--json"], cwd=memrepo.path)
    assert TOKEN not in dry.out
    assert cli(["import", "gemini"], cwd=memrepo.path).code == 0
    _, decisions = memory(memrepo)
    assert TOKEN not in decisions and "The deploy token is ***" in decisions
    assert cli(["check", "--worktree"], cwd=memrepo.path).code == 0


@pytest.mark.parametrize("case", ["link-out", "link-loop", "not-utf8", "huge", "frontmatter", "deep-frontmatter",
                                  "laughing-frontmatter", "unknown-type", "control"])
def test_a_source_file_that_cannot_be_read_is_named_and_nothing_is_imported(
        memrepo: GitRepo, cli: Cli, home: Path, tmp_path: Path, case: str) -> None:
    where = claude_dir(home, memrepo)
    put(where, {"feedback_real-database.md": FEEDBACK})
    outside = tmp_path / "elsewhere.md"
    outside.write_text("---\ntype: user\n---\nsecret plans\n", encoding="utf-8")
    expected = {"link-out": ("stolen.md", 1, "GM950 is a symbolic link out of its directory"),
                "link-loop": ("loop.md", 1, "GM950 is a symbolic link that cannot be followed"),
                "not-utf8": ("latin.md", 8, "GM950 is not UTF-8 (byte"),
                "huge": ("huge.md", 1, "GM950 is 600000 bytes, more than"),
                "frontmatter": ("broken.md", 3, "GM951 has a frontmatter that is not YAML"),
                "deep-frontmatter": ("deep.md", 2, "GM951 has a frontmatter that cannot be read: nested deeper than "
                                                   "100 levels"),
                "laughing-frontmatter": ("laughs.md", 2, "GM951 has a frontmatter that cannot be read: its aliases "
                                                         "expand to more than 10000 copies"),
                "unknown-type": ("odd.md", 2, "GM951 has the memory type 'opinion'"),
                "control": ("escape.md", 5, "GM950 holds the control character U+001B at byte")}[case]
    if case == "link-out":
        (where / "stolen.md").symlink_to(outside)
    elif case == "link-loop":
        (where / "loop.md").symlink_to("loop.md")
    elif case == "not-utf8":
        put(where, {"latin.md": USER.encode() + b"caf\xe9\n"})
    elif case == "huge":
        put(where, {"huge.md": "- x\n" * 150_000})
    elif case == "frontmatter":
        put(where, {"broken.md": "---\nname: x\ntype: [user\n---\nbody\n"})
    elif case == "deep-frontmatter":
        put(where, {"deep.md": "---\ntype: " + "[" * 100_000 + "]" * 100_000 + "\n---\nbody\n"})
    elif case == "laughing-frontmatter":
        laughs = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
        laughs += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
        put(where, {"laughs.md": "---\ntype: user\n" + "\n".join(laughs) + "\n---\nbody\n"})
    elif case == "unknown-type":
        put(where, {"odd.md": "---\ntype: opinion\n---\nbody\n"})
    else:
        put(where, {"escape.md": "---\ntype: user\n---\n\nclears \x1b[2J the screen\n"})
    before = memory(memrepo)
    result = cli(["import", "claude"], cwd=memrepo.path)
    assert result.code == 1
    name, line, message = expected
    assert f"{where / name}:{line}: {message}" in result.err
    assert "nothing was imported" in result.err
    assert memory(memrepo) == before
    assert outside.read_text(encoding="utf-8").endswith("secret plans\n")


def test_empty_source_files_import_nothing(memrepo: GitRepo, cli: Cli, home: Path) -> None:
    put(claude_dir(home, memrepo), {"MEMORY.md": "", "project_empty.md": "---\ntype: project\n---\n"})
    result = cli(["import", "claude"], cwd=memrepo.path)
    assert result.code == 0 and "Nothing new to import." in result.out
    assert "### D-" not in memrepo.read("DECISIONS.md") and "## L-" not in memrepo.read("LESSONS.md")


def test_a_missing_source_names_where_its_cli_keeps_it(memrepo: GitRepo, cli: Cli, home: Path) -> None:
    result = cli(["import", "claude"], cwd=memrepo.path)
    assert result.code == 2
    assert f"{claude_dir(home, memrepo)}:1: GM952 no Claude Code auto memory here" in result.err
    amr = cli(["import", "agent-memory-repo"], cwd=memrepo.path)
    assert amr.code == 2 and "--from PATH" in amr.err


@pytest.mark.parametrize("source", ["claude", "codex", "gemini", "cline", "agent-memory-repo", "notes"])
def test_a_folder_holding_none_of_the_sources_files_is_no_source(memrepo: GitRepo, cli: Cli, home: Path,
                                                                  tmp_path: Path, source: str) -> None:
    """A wrong --from (the folder above the memory, a typo'd one): GM952 naming it, never "Nothing new to
    import", which reads as if it had all been imported already."""
    wrong = tmp_path / "wrong"
    put(wrong, {"README.txt": "not memory\n", "sub/MEMORY.md": "- one level too deep\n"})
    before = memory(memrepo)
    result = cli(["import", source, "--from", str(wrong)], cwd=memrepo.path)
    assert result.code == 2, result.out
    assert f"{wrong}:1: GM952 no " in result.err and "Nothing new" not in result.out
    assert memory(memrepo) == before


def test_dry_run_and_json_show_what_would_land_where_and_write_nothing(memrepo: GitRepo, cli: Cli,
                                                                      home: Path) -> None:
    put(claude_dir(home, memrepo), {"feedback_real-database.md": FEEDBACK, "user_role.md": USER})
    before = memory(memrepo)
    result = cli(["import", "claude", "--dry-run", "--json"], cwd=memrepo.path)
    assert result.code == 0
    data = json.loads(result.out)
    assert [item["lands"] for item in data["lessons"]] == ["LESSONS"]
    assert [item["lands"] for item in data["proposals"]] == ["DECISIONS"]
    assert data["lessons"][0]["written"] == "2026-10-26"
    assert "written" not in data
    assert memory(memrepo) == before
    text = cli(["import", "claude", "--dry-run"], cwd=memrepo.path)
    assert "feedback_real-database.md:6: would land in LESSONS, an open lesson" in text.out


def test_codex_memories_land_as_lessons_and_the_summary_as_proposals(memrepo: GitRepo, cli: Cli,
                                                                    home: Path) -> None:
    put(home / ".codex" / "memories", {
        "memory_summary.md": "# Summary\n- gitmem repo: python, pytest, pre-commit hooks\n",
        "MEMORY.md": "# Registry\n- Run `pytest -x` before pushing: the CI takes 20 minutes\n",
        "raw_memories.md": "- `uv sync` fails offline; use the venv's pip\n",
        "rollout_summaries/0199-abc.md": "# Rollout\nRecap.\n- The migration needs `--fake-initial` on old DBs\n",
        "rollout_summaries/0199-abc.jsonl": "{}\n"})
    result = cli(["import", "codex", "--json"], cwd=memrepo.path)
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert [item["file"].rsplit("/", 1)[-1] for item in data["lessons"]] == [
        "MEMORY.md", "raw_memories.md", "0199-abc.md"]
    assert [item["text"] for item in data["proposals"]] == ["gitmem repo: python, pytest, pre-commit hooks"]
    assert data["written"]["lessons"] == ["L-0001", "L-0002", "L-0003"]
    assert cli(["check", "--worktree"], cwd=memrepo.path).code == 0


def test_cline_memory_bank_bullets_and_paragraphs_are_proposals(memrepo: GitRepo, cli: Cli, home: Path) -> None:
    memrepo.write("memory-bank/projectbrief.md", "# Project Brief\n\nA CLI that keeps agent memory in git.\n\n"
                                                 "## Goals\n- Reviewable memory\n- No lost work\n")
    memrepo.write("memory-bank/progress.md", "")
    result = cli(["import", "cline", "--json"], cwd=memrepo.path)
    assert result.code == 0, result.err
    texts = [item["text"] for item in json.loads(result.out)["proposals"]]
    assert texts == ["A CLI that keeps agent memory in git.", "Reviewable memory", "No lost work"]


def test_agent_memory_repo_keeps_the_added_date_and_refuses_links_out(memrepo: GitRepo, cli: Cli, home: Path,
                                                                     tmp_path: Path) -> None:
    amr = tmp_path / "amr"
    put(amr, {"MEMORY.md": "# Memory\n\n## Index\n- Prefer small PRs [source: review 2026-09; added: 2026-09-14] "
                           "[[entries/small-prs]]\n- Staging is at staging.example [source: ops; added: 2026-08-01]\n",
              "entries/small-prs.md": "Details.\n"})
    result = cli(["import", "agent-memory-repo", "--from", str(amr), "--json"], cwd=memrepo.path)
    assert result.code == 0, result.err
    proposals = json.loads(result.out)["proposals"]
    assert [(p["text"], p["written"]) for p in proposals] == [
        ("Prefer small PRs [[entries/small-prs]]", "2026-09-14"), ("Staging is at staging.example", "2026-08-01")]
    assert proposals[0]["origin"].endswith("as entries/small-prs")
    put(amr, {"MEMORY.md": "## Index\n- Leak [source: x; added: 2026-01-01] [[../../etc/passwd]]\n"})
    refused = cli(["import", "agent-memory-repo", "--from", str(amr)], cwd=memrepo.path)
    assert refused.code == 1 and "GM950 links [[../../etc/passwd]] out of the repository" in refused.err
    put(amr, {"MEMORY.md": "## Index\n- Long [source: x; added: 2026-01-01] [[" + "a" * 300 + "]]\n"})
    too_long = cli(["import", "agent-memory-repo", "--from", str(amr), "--dry-run"], cwd=memrepo.path)
    assert too_long.code == 1 and "GM950 links [[aaaa" in too_long.err and "Traceback" not in too_long.err


def test_a_secret_in_a_memorys_name_is_masked_too(memrepo: GitRepo, cli: Cli, home: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The frontmatter `name:` travels into the Origin line: it is masked like the text."""
    monkeypatch.setenv("GITHUB_TOKEN", "Sup3rS3cretValue99")
    put(claude_dir(home, memrepo), {"feedback_deploy.md": FEEDBACK.replace("name: real-database",
                                                                           "name: deploy-Sup3rS3cretValue99")})
    result = cli(["import", "claude"], cwd=memrepo.path)
    assert result.code == 0, result.err
    written = memrepo.read("LESSONS.md") + memrepo.read("DECISIONS.md")
    assert "Sup3rS3cretValue99" not in written and "deploy-***" in written


def test_notes_outside_gitmem_blocks_are_proposals_and_rules_is_never_read(memrepo: GitRepo, cli: Cli,
                                                                          home: Path) -> None:
    memrepo.write("CLAUDE.md", "# Team notes\n\n- Use pnpm, not npm\n\n<!-- gitmem:begin protocol -->\n"
                               "- gitmem's own protocol line\n<!-- gitmem:end protocol -->\n\n@AGENTS.md\n")
    memrepo.write("AGENTS.md", "Run `make lint` before committing.\n\n## Gemini Added Memories\n- not a note\n")
    result = cli(["import", "notes", "--json"], cwd=memrepo.path)
    assert result.code == 0, result.err
    found = [(p["file"], p["line"], p["text"]) for p in json.loads(result.out)["proposals"]]
    assert found == [("./CLAUDE.md", 3, "Use pnpm, not npm"), ("./AGENTS.md", 1, "Run `make lint` before committing.")]


def test_a_linked_rollout_folder_is_named_not_followed(memrepo: GitRepo, cli: Cli, home: Path,
                                                       tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    put(elsewhere, {"0199.md": "- private\n"})
    memories = home / ".codex" / "memories"
    put(memories, {"MEMORY.md": "- a memory\n"})
    (memories / "rollout_summaries").symlink_to(elsewhere)
    result = cli(["import", "codex"], cwd=memrepo.path)
    assert result.code == 1
    assert f"{memories / 'rollout_summaries'}:1: GM950 is a symbolic link out of its directory" in result.err


def test_a_topic_file_that_opens_with_headings_and_code_stays_valid_memory(memrepo: GitRepo, cli: Cli,
                                                                            home: Path) -> None:
    put(claude_dir(home, memrepo), {"feedback_fmt.md": "---\ntype: feedback\n---\n# Formatting\n## Details\n"
                                                       "Run the formatter.\n```\nmake fmt\n- Status: promoted R-01\n"})
    assert cli(["import", "claude"], cwd=memrepo.path).code == 0
    lessons, _ = memory(memrepo)
    assert "## L-0001 · Formatting\n" in lessons
    assert "- Status: open" in lessons and lessons.count("## L-") == 1
    assert cli(["check", "--worktree"], cwd=memrepo.path).code == 0


def _every_source(repo: GitRepo, home: Path, tmp_path: Path) -> dict[str, list[str]]:
    """A small fixture of each source format; the argv that imports it."""
    put(claude_dir(home, repo), {"MEMORY.md": INDEX, "feedback_real-database.md": FEEDBACK, "user_role.md": USER})
    put(home / ".codex" / "memories", {"MEMORY.md": "- Run `pytest -x` first\n",
                                       "rollout_summaries/t1.md": "- the migration needs a flag\n"})
    put(home / ".gemini", {"GEMINI.md": "## Gemini Added Memories\n- Prefers Python.\n"})
    repo.write("memory-bank/activeContext.md", "# Active\n\nShipping the importer.\n")
    put(tmp_path / "amr", {"MEMORY.md": "## Index\n- Small PRs [source: review; added: 2026-09-14]\n"})
    repo.write("CLAUDE.md", "- Use pnpm\n")
    return {"claude": ["claude"], "codex": ["codex"], "gemini": ["gemini"], "cline": ["cline"],
            "agent-memory-repo": ["agent-memory-repo", "--from", str(tmp_path / "amr")], "notes": ["notes"]}


@pytest.mark.parametrize("source", ["claude", "codex", "gemini", "cline", "agent-memory-repo", "notes"])
def test_each_source_imports_once_and_a_second_import_adds_nothing(memrepo: GitRepo, cli: Cli, home: Path,
                                                                   tmp_path: Path, source: str) -> None:
    argv = _every_source(memrepo, home, tmp_path)[source]
    first = cli(["import", *argv], cwd=memrepo.path)
    assert first.code == 0, first.err
    assert "### D-0001 · Accept" in memrepo.read("DECISIONS.md")
    assert cli(["check", "--worktree"], cwd=memrepo.path).code == 0
    commit_all(memrepo)
    before = memory(memrepo)
    again = cli(["import", *argv, "--json"], cwd=memrepo.path)
    data = json.loads(again.out)
    assert data["lessons"] == [] and data["proposals"] == [] and data["skipped"]
    assert data["written"] == {"lessons": [], "decision": None}
    assert memory(memrepo) == before


def test_a_linked_worktree_reads_the_auto_memory_of_the_repositorys_main_work_tree(memrepo: GitRepo, cli: Cli,
                                                                                    home: Path, tmp_path: Path) -> None:
    # Claude Code keys auto memory by the repository's root, so every worktree of it shares one memory folder.
    linked = tmp_path / "linked"
    memrepo.repo.add_worktree("side", str(linked))
    put(claude_dir(home, memrepo), {"feedback_real-database.md": FEEDBACK})
    result = cli(["import", "claude", "--json"], cwd=linked)
    assert result.code == 0, result.err
    assert [item["text"] for item in json.loads(result.out)["lessons"]] == [
        "Integration tests must hit a real database, not mocks."]
    assert "## L-0001" in (linked / "LESSONS.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", [b"bad\xff.md", b"two\nlines.md"])
def test_a_file_name_an_origin_cannot_hold_is_named_not_imported(memrepo: GitRepo, cli: Cli, home: Path,
                                                                 name: bytes) -> None:
    where = claude_dir(home, memrepo)
    put(where, {"feedback_real-database.md": FEEDBACK})
    with open(os.path.join(os.fsencode(where), name), "wb") as handle:
        handle.write(USER.encode())
    before = memory(memrepo)
    result = cli(["import", "claude"], cwd=memrepo.path)
    assert result.code == 1, result.err
    assert "GM950 has a name that is not printable UTF-8 text" in result.err
    assert memory(memrepo) == before


def test_an_edit_of_a_promoted_lessons_source_leaves_the_promotion_standing(memrepo: GitRepo, cli: Cli,
                                                                           home: Path) -> None:
    where = claude_dir(home, memrepo)
    put(where, {"feedback_real-database.md": FEEDBACK})
    assert cli(["import", "claude"], cwd=memrepo.path).code == 0
    memrepo.write("LESSONS.md", memrepo.read("LESSONS.md").replace("- Status: open", "- Status: promoted R-01"))
    put(where, {"feedback_real-database.md": FEEDBACK.replace("not mocks", "never mocks")})
    assert cli(["import", "claude"], cwd=memrepo.path).code == 0
    lessons, _ = memory(memrepo)
    assert "- Status: promoted R-01" in lessons, "the rule's provenance stays"
    assert "- Replaces: L-0001 (its text was edited in claude)" in lessons


def test_two_imports_at_once_land_the_batch_once(memrepo: GitRepo, home: Path) -> None:
    import subprocess
    import sys

    put(home / ".gemini", {"GEMINI.md": "## Gemini Added Memories\n" + "".join(f"- fact {i}\n" for i in range(40))})
    gitmem = Path(sys.executable).parent / "gitmem"
    env = {**os.environ, "HOME": str(home)}
    runs = [subprocess.Popen([str(gitmem), "import", "gemini"], cwd=memrepo.path, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
    assert [run.wait(timeout=120) for run in runs] == [0, 0]
    decisions = memrepo.read("DECISIONS.md")
    assert "### D-0001 · Accept 40 facts imported from gemini" in decisions
    assert "### D-0002" not in decisions, "the second import planned against the memory the first wrote"


def test_a_failed_second_write_puts_the_first_file_back(memrepo: GitRepo, cli: Cli, home: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    import errno

    from gitmem.confined import files

    real_write = files.write_bytes

    def full_disk_for_decisions(root: Path, rel: str, data: bytes) -> None:
        if rel == "DECISIONS.md":
            raise OSError(errno.ENOSPC, "No space left on device")
        real_write(root, rel, data)

    put(claude_dir(home, memrepo), {"feedback_real-database.md": FEEDBACK, "user_role.md": USER})
    before = memory(memrepo)
    monkeypatch.setattr(files, "write_bytes", full_disk_for_decisions)
    result = cli(["import", "claude"], cwd=memrepo.path)
    assert result.code == 2, result.err
    assert "DECISIONS.md cannot be written" in result.err and "nothing was changed" in result.err
    assert memory(memrepo) == before, "LESSONS, written first, is put back"


def test_the_import_is_the_librarys_one_call_dry_run_or_not(memrepo: GitRepo, home: Path) -> None:
    from gitmem.interop.importing import import_source, imported_data, over_pending_error
    from gitmem.memory_writer import MemoryWriter
    from gitmem.workspace import Workspace

    put(claude_dir(home, memrepo), {"feedback_real-database.md": FEEDBACK, "user_role.md": USER})
    ws = Workspace.at(memrepo.path)
    before = memory(memrepo)
    said = import_source("claude", MemoryWriter(ws), ws, where=None, dry_run=True, environ={}, home=home)
    assert said.landed is None and said.refused is None and memory(memrepo) == before
    assert "written" not in imported_data(said) and len(said.plan.steps) == 2
    done = import_source("claude", MemoryWriter(ws), ws, where=None, dry_run=False, environ={}, home=home)
    assert done.landed is not None and done.landed.lessons == ("L-0001",) and done.landed.decision == "D-0001"
    assert imported_data(done)["written"] == {"lessons": ["L-0001"], "decision": "D-0001"}
    assert "### D-0001 · Accept 2 facts imported from claude" in memory(memrepo)[1]
    # The one refusal's wording, for the dry run and for the import that would have written.
    assert str(over_pending_error("gemini", _violation(), dry_run=True)).endswith("nothing would be imported")
    assert str(over_pending_error("gemini", _violation())).endswith("nothing was imported")


def _violation() -> Violation:
    from gitmem.codes import IMPORT_BATCH_OVER_PENDING

    return Violation("DECISIONS.md", 1, IMPORT_BATCH_OVER_PENDING.code, "over")
