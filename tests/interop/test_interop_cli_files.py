"""`gitmem import` of the files the agent CLIs really read, and of an export written where they read it, in a real
repository (acceptance rehearsal, round 6).

The places follow each CLI's public docs or source, named beside them:
- Claude Code: code.claude.com/docs/en/memory ("project memory: ./CLAUDE.md or ./.claude/CLAUDE.md").
- Gemini CLI 0.61.0 (agent-cli/gemini-cli): packages/core/src/tools/memoryTool.ts, `getGlobalMemoryFilePath()` is
  `~/.gemini/` joined with the first of `context.fileName`; its prompt (`toolUsageRememberingFacts`) has the model
  edit that file directly ("There is no `save_memory` tool"), so the memories stand anywhere in it.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from gitmem.interop.claude_code import project_dir_name
from tests.interop.test_interop_export import fill, memory
from tests.interop.test_interop_import import home, put  # noqa: F401 (fixture)
from tests.support.helpers import CliResult, GitRepo, counting

Cli = Callable[..., CliResult]


@pytest.mark.parametrize(("fmt", "where", "source"), [
    ("gemini", ".", "notes"),                       # the project's GEMINI.md, which notes reads
    ("codex", "memory-bank", "cline"),              # MEMORY.md and memory_summary.md in Cline's memory bank
    ("agent-memory-repo", "memory-bank", "cline"),
    ("gemini", "memory-bank", "cline"),
])
def test_an_export_written_where_a_paragraph_source_reads_imports_back_as_nothing(
        memrepo: GitRepo, cli: Cli, home: Path, fmt: str, where: str, source: str) -> None:  # noqa: F811
    fill(memrepo, cli)
    exported = cli(["export", "--to", fmt, "--out", str(memrepo.path / where)], cwd=memrepo.path)
    assert exported.code == 0, exported.err
    before = memory(memrepo)
    again = cli(["import", source], cwd=memrepo.path)
    assert again.code == 0, again.err
    assert "This memory is exported" not in again.out, "the export's pointer back is its own words, not a fact"
    assert "Nothing new to import." in again.out
    assert memory(memrepo) == before


def test_a_users_own_paragraph_beside_an_export_is_still_imported(memrepo: GitRepo, cli: Cli,
                                                                 home: Path) -> None:  # noqa: F811
    fill(memrepo, cli)
    assert cli(["export", "--to", "gemini", "--out", str(memrepo.path)], cwd=memrepo.path).code == 0
    text = (memrepo.path / "GEMINI.md").read_text(encoding="utf-8")
    mine = "This memory is exported nightly; MEMORY.md holds more.\n\n## Gemini Added Memories"
    (memrepo.path / "GEMINI.md").write_text(text.replace("## Gemini Added Memories", mine), encoding="utf-8")
    result = cli(["import", "notes", "--dry-run"], cwd=memrepo.path)
    assert result.code == 0, result.err
    assert "would land in DECISIONS, a proposal: This memory is exported nightly" in result.out


# Each CLI's own name for the project's instructions, beside CLAUDE.md, AGENTS.md and GEMINI.md (gitmem.interop.notes).
INSTRUCTION_FILES = {
    ".claude/CLAUDE.md": "Use pnpm, never npm.",                                  # Claude Code, Copilot CLI
    "CLAUDE.local.md": "My sandbox answers on port 9000.",                        # Claude Code, personal
    "QWEN.md": "Keep the public API stable.",                                     # Qwen Code
    ".github/copilot-instructions.md": "Prefer small pull requests.",             # GitHub Copilot CLI
}


@pytest.mark.parametrize("rel", sorted(INSTRUCTION_FILES))
def test_notes_are_read_from_each_file_a_supported_cli_reads_as_the_projects_instructions(
        memrepo: GitRepo, cli: Cli, home: Path, rel: str) -> None:  # noqa: F811
    put(memrepo.path, {rel: f"# Notes\n\n- {INSTRUCTION_FILES[rel]}\n"})
    result = cli(["import", "notes", "--json"], cwd=memrepo.path)
    assert result.code == 0, result.err
    proposals = json.loads(result.out)["proposals"]
    assert [(item["file"], item["line"], item["text"]) for item in proposals] == [
        (f"./{rel}", 3, INSTRUCTION_FILES[rel])]
    assert proposals[0]["origin"].startswith(f"notes · ./{rel}:3 · written ")
    again = cli(["import", "notes"], cwd=memrepo.path)
    assert again.code == 0 and "Nothing new to import." in again.out, again.err


# Claude Code 2.1.197 (agent-cli/claude-code) loads every `*.md` below `.claude/rules/` with the project's CLAUDE.md;
# a `paths:` frontmatter says for which files a rule loads, and each of its notes says so.
def test_notes_are_read_from_claude_codes_rules_folder_below_their_frontmatter(memrepo: GitRepo, cli: Cli,
                                                                            home: Path) -> None:  # noqa: F811
    put(memrepo.path, {
        ".claude/rules/testing.md": '---\npaths:\n  - "tests/**"\n---\n\n- Run the suite before committing.\n',
        ".claude/rules/frontend/react.md": "# React\n\nComponents are functions, never classes.\n",
        ".claude/rules/notes.txt": "- not a rule: Claude Code reads only .md\n"})
    result = cli(["import", "notes", "--json"], cwd=memrepo.path)
    assert result.code == 0, result.err
    assert [(item["file"], item["line"], item["text"]) for item in json.loads(result.out)["proposals"]] == [
        ("./.claude/rules/frontend/react.md", 3, "Components are functions, never classes."),
        ("./.claude/rules/testing.md", 6, "(for tests/**) Run the suite before committing.")]


@pytest.mark.parametrize("name", ["CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md", "docs/imported.md"])
def test_a_claude_code_files_frontmatter_is_no_note_and_imports_nothing(
        memrepo: GitRepo, cli: Cli, home: Path, name: str) -> None:  # noqa: F811
    """Claude Code cuts the frontmatter off every file it loads, an imported one too, and shows its model only the
    text below; a `paths:` outside `.claude/rules/` loads the file for every path anyway, so it says nothing."""
    files = {"docs/hidden.md": "- Only the frontmatter names this file.\n",
             name: "---\ndescription: Team notes, see @docs/hidden.md\npaths:\n  - src/**\n---\n\n"
                   "- Review every pull request.\n"}
    if name == "docs/imported.md":
        files["CLAUDE.md"] = "@docs/imported.md\n"
    put(memrepo.path, files)
    result = cli(["import", "notes", "--json"], cwd=memrepo.path)
    assert result.code == 0, result.err
    assert [(item["file"], item["line"], item["text"]) for item in json.loads(result.out)["proposals"]] == [
        (f"./{name}", 7, "Review every pull request.")]


def test_a_rules_scope_is_said_with_its_notes_and_a_frontmatter_never_closed_is_none(memrepo: GitRepo, cli: Cli,
                                                                                    home: Path) -> None:  # noqa: F811
    """A rule for every path (`**`) says no scope; a comma inside braces is the pattern's own, as Claude Code
    splits `paths:`; a `---` no line closes is a thematic break, the whole file notes, as Claude Code reads it."""
    put(memrepo.path, {
        ".claude/rules/api.md": '---\npaths: "src/{api,web}/**, docs/**"\n---\n- Validate every input.\n',
        ".claude/rules/all.md": "---\npaths: ['**']\n---\n- Prefer small modules.\n",
        "CLAUDE.md": "---\n\nShip on Fridays.\n"})
    result = cli(["import", "notes", "--json"], cwd=memrepo.path)
    assert result.code == 0, result.err
    assert sorted((item["file"], item["line"], item["text"]) for item in json.loads(result.out)["proposals"]) == [
        ("./.claude/rules/all.md", 4, "Prefer small modules."),
        ("./.claude/rules/api.md", 4, "(for src/{api,web}/**, docs/**) Validate every input."),
        ("./CLAUDE.md", 3, "Ship on Fridays.")]


# Codex (AGENTS.md), Qwen Code (QWEN.md) and Copilot CLI (its copilot-instructions.md) cut no frontmatter: the
# model reads the lines between the `---`s as the rest, so they are notes, and no heading's title.
@pytest.mark.parametrize("name", ["AGENTS.md", "QWEN.md", ".github/copilot-instructions.md"])
def test_the_lines_between_dashes_atop_a_file_no_cli_cuts_are_notes(
        memrepo: GitRepo, cli: Cli, home: Path, name: str) -> None:  # noqa: F811
    put(memrepo.path, {name: "---\nImportant: never force-push main.\n---\n\n- Review every pull request.\n"})
    result = cli(["import", "notes", "--dry-run", "--json"], cwd=memrepo.path)
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert [(item["file"], item["line"], item["text"]) for item in data["proposals"]] == [
        (f"./{name}", 2, "Important: never force-push main."), (f"./{name}", 5, "Review every pull request.")]
    assert data["not_read"] == []


def test_a_gemini_md_that_opens_with_a_sentence_between_dashes_imports_it(memrepo: GitRepo, cli: Cli,
                                                                          home: Path) -> None:  # noqa: F811
    """It was GM951, and the whole import stopped, over text Gemini CLI shows its model."""
    put(memrepo.path, {"GEMINI.md": "---\nUse pnpm, never npm.\n---\n- Lint before committing.\n"})
    result = cli(["import", "notes", "--dry-run"], cwd=memrepo.path)
    assert result.code == 0, result.err
    assert result.out.splitlines()[:2] == [
        "./GEMINI.md:2: would land in DECISIONS, a proposal: Use pnpm, never npm.",
        "./GEMINI.md:4: would land in DECISIONS, a proposal: Lint before committing."]


def test_an_import_between_dashes_atop_a_gemini_md_is_followed_as_gemini_cli_follows_it(
        memrepo: GitRepo, cli: Cli, home: Path) -> None:  # noqa: F811
    """The same line in the body is followed; the file it imports is Gemini CLI's too, shown as written."""
    put(memrepo.path, {
        "GEMINI.md": "---\ndescription: Team notes, see @docs/extra.md and @docs/missing.md\n---\n"
                     "- Lint before committing.\n",
        "docs/extra.md": "---\nUse pnpm workspaces.\n---\n"})
    result = cli(["import", "notes", "--dry-run", "--json"], cwd=memrepo.path)
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert [(item["file"], item["line"], item["text"]) for item in data["proposals"]] == [
        ("./GEMINI.md", 2, "description: Team notes, see @docs/extra.md and @docs/missing.md"),
        ("./GEMINI.md", 4, "Lint before committing."),
        ("./docs/extra.md", 2, "Use pnpm workspaces.")]
    assert [(item["file"], item["line"], item["target"], item["kind"]) for item in data["not_read"]] == [
        ("./GEMINI.md", 2, "docs/missing.md", "import")]


def test_a_frontmatter_a_cli_cuts_that_is_not_yaml_is_left_out_said_and_the_rest_imported(
        memrepo: GitRepo, cli: Cli, home: Path) -> None:  # noqa: F811
    """Claude Code (CLAUDE.md, a rule) hides it and loads the rest; an `.instructions.md`'s is its settings: the
    import did stop on GM951, nothing imported."""
    put(memrepo.path, {
        "CLAUDE.md": "---\nImportant: never: force-push\n---\n\n- Review every pull request.\n",
        ".claude/rules/broken.md": "---\npaths: [\n---\n- Validate every input.\n",
        ".github/instructions/style.instructions.md": "---\nUse pnpm, never npm.\n---\n- Lint first.\n"})
    result = cli(["import", "notes", "--dry-run", "--json"], cwd=memrepo.path)
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert sorted((item["file"], item["line"], item["text"]) for item in data["proposals"]) == [
        ("./.claude/rules/broken.md", 4, "Validate every input."),
        ("./.github/instructions/style.instructions.md", 4, "Lint first."),
        ("./CLAUDE.md", 5, "Review every pull request.")]
    assert sorted((item["file"], item["line"], item["target"], item["kind"]) for item in data["not_read"]) == [
        ("./.claude/rules/broken.md", 1, "1-3", "frontmatter"),
        ("./.github/instructions/style.instructions.md", 1, "1-3", "frontmatter"),
        ("./CLAUDE.md", 1, "1-3", "frontmatter")]
    shown = cli(["import", "notes", "--dry-run"], cwd=memrepo.path)
    assert shown.code == 0, shown.err
    assert ("./CLAUDE.md:1: frontmatter (lines 1-3) not read, a frontmatter that is not YAML (mapping values are "
            "not allowed here): left out as the file's settings, not its notes; the text below it is read"
            ) in shown.out.splitlines(), shown.out
    assert ("./.github/instructions/style.instructions.md:1: frontmatter (lines 1-3) not read, a frontmatter that "
            "is not a mapping of keys to values") in shown.out, shown.out


# Gemini CLI 0.61.0's global personal memory, as its model writes it: no `save_memory` tool, the file edited
# directly, the old section kept where an earlier release wrote it.
GLOBAL_GEMINI = """# Personal preferences

- I prefer pytest over unittest in every project.

My editor is Neovim; suggest its keybindings.

@~/.gemini/more.md
<!-- gitmem:begin protocol -->
- not a memory: gitmem's own block
<!-- gitmem:end protocol -->

## Gemini Added Memories
- Prefers Python.
"""


def test_the_global_gemini_memory_is_read_wherever_the_model_wrote_it(memrepo: GitRepo, cli: Cli,
                                                                      home: Path) -> None:  # noqa: F811
    put(home / ".gemini", {"GEMINI.md": GLOBAL_GEMINI})
    result = cli(["import", "gemini", "--json"], cwd=memrepo.path)
    assert result.code == 0, result.err
    assert [(item["file"], item["line"], item["text"]) for item in json.loads(result.out)["proposals"]] == [
        ("~/.gemini/GEMINI.md", 3, "I prefer pytest over unittest in every project."),
        ("~/.gemini/GEMINI.md", 5, "My editor is Neovim; suggest its keybindings."),
        ("~/.gemini/GEMINI.md", 13, "Prefers Python."),
    ]
    again = cli(["import", "gemini"], cwd=memrepo.path)
    assert again.code == 0 and "Nothing new to import." in again.out, again.err


def test_the_lines_between_dashes_atop_the_global_gemini_memory_are_memories_and_imports(
        memrepo: GitRepo, cli: Cli, home: Path) -> None:  # noqa: F811
    """Gemini CLI cuts no frontmatter: its model reads those lines, and the closing `---` makes no heading of them."""
    put(home / ".gemini", {"GEMINI.md": "---\nPrefers tabs. See @extra.md\n---\n- Prefers Python.\n",
                           "extra.md": "- Prefers short answers.\n"})
    result = cli(["import", "gemini", "--json"], cwd=memrepo.path)
    assert result.code == 0, result.err
    assert [(item["file"], item["line"], item["text"]) for item in json.loads(result.out)["proposals"]] == [
        ("~/.gemini/GEMINI.md", 2, "Prefers tabs. See @extra.md"),
        ("~/.gemini/GEMINI.md", 4, "Prefers Python."),
        ("~/.gemini/extra.md", 1, "Prefers short answers.")]


def test_the_global_gemini_memory_file_is_the_one_the_settings_name(memrepo: GitRepo, cli: Cli,
                                                                    home: Path) -> None:  # noqa: F811
    settings = {"context": {"fileName": ["AGENTS.md", "../outside.md", str(home / "outside.md")]}}
    put(home / ".gemini", {"settings.json": json.dumps(settings), "AGENTS.md": "- Always run the linter first.\n"})
    put(home, {"outside.md": "- not Gemini's: a path is no file of its folder\n"})
    result = cli(["import", "gemini", "--json"], cwd=memrepo.path)
    assert result.code == 0, result.err
    assert [(item["file"], item["text"]) for item in json.loads(result.out)["proposals"]] == [
        ("~/.gemini/AGENTS.md", "Always run the linter first.")]


def test_settings_a_dotfiles_checkout_links_into_place_are_read_as_the_cli_reads_them(
        memrepo: GitRepo, cli: Cli, home: Path, tmp_path: Path) -> None:  # noqa: F811
    # stow, chezmoi and home-manager make ~/.gemini/settings.json a link; Gemini CLI follows it. Read as naming
    # nothing, the model's memory file it names was never imported.
    dotfiles = tmp_path / "dotfiles"
    put(dotfiles, {"settings.json": json.dumps({"context": {"fileName": "AGENTS.md"}})})
    put(home / ".gemini", {"AGENTS.md": "- Always run the linter first.\n"})
    (home / ".gemini" / "settings.json").symlink_to(dotfiles / "settings.json")
    result = cli(["import", "gemini", "--json"], cwd=memrepo.path)
    assert result.code == 0, result.err
    assert [item["file"] for item in json.loads(result.out)["proposals"]] == ["~/.gemini/AGENTS.md"]


def test_a_fifo_where_a_clis_settings_belong_is_read_as_no_settings(tmp_path: Path) -> None:
    # Each reader of the human's CLI settings (the import's, the box's warning, the key stand-in's) opens the path
    # without waiting for a writer: a FIFO there blocked `gitmem cycle` before the agent started.
    import os
    import threading

    from gitmem.agents.sandbox_mounts import hidden_config
    from gitmem.config.user_files import read_settings

    for folder in (".claude", ".codex"):
        (tmp_path / folder).mkdir()
    os.mkfifo(tmp_path / ".claude" / "settings.json")
    os.mkfifo(tmp_path / ".codex" / "config.toml")
    found: list[object] = []
    reader = threading.Thread(target=lambda: found.extend([read_settings(tmp_path / ".claude" / "settings.json"),
                                                           hidden_config((), {"HOME": str(tmp_path)})]), daemon=True)
    reader.start()
    reader.join(10)
    assert found == [{}, []]


def test_an_export_to_geminis_own_place_imports_back_as_nothing(memrepo: GitRepo, cli: Cli,
                                                               home: Path) -> None:  # noqa: F811
    fill(memrepo, cli)
    assert cli(["export", "--to", "gemini", "--cli-location"], cwd=memrepo.path).code == 0
    before = memory(memrepo)
    again = cli(["import", "gemini"], cwd=memrepo.path)
    assert again.code == 0 and "Nothing new to import." in again.out, (again.out, again.err)
    assert memory(memrepo) == before


def test_an_export_to_gemini_goes_to_the_file_its_settings_name(memrepo: GitRepo, cli: Cli,
                                                                home: Path) -> None:  # noqa: F811
    """Gemini CLI loads the first `context.fileName` from `~/.gemini`, not GEMINI.md, when the settings name one:
    the export goes there, and imports back as nothing."""
    put(home / ".gemini", {"settings.json": json.dumps({"context": {"fileName": ["AGENTS.md"]}})})
    fill(memrepo, cli)
    assert cli(["export", "--to", "gemini", "--cli-location"], cwd=memrepo.path).code == 0
    assert "gitmem" in (home / ".gemini" / "AGENTS.md").read_text(encoding="utf-8")
    assert not (home / ".gemini" / "GEMINI.md").exists()
    before = memory(memrepo)
    again = cli(["import", "gemini"], cwd=memrepo.path)
    assert again.code == 0 and "Nothing new to import." in again.out, (again.out, again.err)
    assert memory(memrepo) == before


def counting_reads(monkeypatch: pytest.MonkeyPatch, cls: type, name: str) -> list[object]:
    """Every read of the property `cls.name` from here on (it still answers): what this cost test counts."""
    reads: list[object] = []
    real = getattr(cls, name)

    def counted(self: object) -> object:
        reads.append(self)
        return real.fget(self)

    monkeypatch.setattr(cls, name, property(counted))
    return reads


def test_an_import_costs_in_proportion_to_its_facts(memrepo: GitRepo, cli: Cli, home: Path,  # noqa: F811
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A Codex memory of many bullets (a 490 KB raw_memories.md holds 20,000) is planned, judged against
    Pending and shown without going over the batch once per fact: the next lesson number, the environment's
    secret values and where each step lands were each found again for every fact (minutes for 20,000)."""
    from gitmem import secrets
    from gitmem.interop.plan import ImportPlan
    from gitmem.memory.lessons import Lesson

    facts = 400
    put(home / ".codex" / "memories", {"raw_memories.md": "".join(f"- memory number {n}\n" for n in range(facts))})
    numbers = counting_reads(monkeypatch, Lesson, "number")
    steps = counting_reads(monkeypatch, ImportPlan, "lessons")
    values = counting(monkeypatch, secrets, "env_values")
    result = cli(["import", "codex", "--dry-run", "--json"], cwd=memrepo.path)
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert len(data["lessons"]) == facts and "refused" not in data
    assert {item["lands"] for item in data["lessons"]} == {"LESSONS"}
    assert len(numbers) < 4 * facts, "the lesson numbers are read once per batch, not once per lesson"
    assert len(steps) < 10, "where each step lands is known from its list, not searched for"
    assert len(values) < 10, "the environment's secret values are found once per import"


def test_a_source_edited_whole_is_matched_fact_by_fact_without_comparing_every_pair(
        memrepo: GitRepo, cli: Cli, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """Codex rewrites its memory files whole: each edited fact still supersedes its own earlier import, found
    through the words they share, not by comparing it with every fact that left the file (2,500 edited facts took
    33 s, and grew with the square of their number)."""
    from gitmem.interop import plan

    facts = 200
    where = home / ".codex" / "memories"
    put(where, {"raw_memories.md": "".join(f"- alpha{n} beta{n} gamma{n} delta{n} build\n" for n in range(facts))})
    assert cli(["import", "codex"], cwd=memrepo.path).code == 0
    memrepo.stage("LESSONS.md", "DECISIONS.md")
    memrepo.commit("import codex")
    put(where, {"raw_memories.md": "".join(f"- alpha{n} beta{n} gamma{n} epsilon{n} build\n" for n in range(facts))})
    compared = counting(monkeypatch, plan, "_likeness")
    result = cli(["import", "codex", "--dry-run", "--json"], cwd=memrepo.path)
    assert result.code == 0, result.err
    lessons = json.loads(result.out)["lessons"]
    assert [(item["text"].split()[0], item["supersedes"]) for item in lessons] == [
        (f"alpha{n}", f"L-{n + 1:04d}") for n in range(facts)]
    assert len(compared) <= 2 * facts, "each fact is compared with the few known facts it shares rare words with"


def test_a_gitmem_block_left_open_does_not_hide_the_notes_after_it(memrepo: GitRepo, cli: Cli,
                                                                   home: Path) -> None:  # noqa: F811
    """A begin marker with no end (its end cut by hand, or one an agent planted above the human's notes) is only
    that line; a whole block is still gitmem's own."""
    put(memrepo.path, {"CLAUDE.md": "<!-- gitmem:begin protocol -->\n@AGENTS.md\n<!-- gitmem:end protocol -->\n\n"
                                    "<!-- gitmem:begin protocol -->\n- Run the linter before every commit.\n\n"
                                    "Deploys go out on Thursdays.\n"})
    result = cli(["import", "notes", "--json"], cwd=memrepo.path)
    assert result.code == 0, result.err
    assert [(item["line"], item["text"]) for item in json.loads(result.out)["proposals"]] == [
        (6, "Run the linter before every commit."), (8, "Deploys go out on Thursdays.")]


def test_a_paragraph_in_the_projects_gemini_section_is_imported_once(memrepo: GitRepo, cli: Cli,
                                                                     home: Path) -> None:  # noqa: F811
    """The section is the gemini source's and the rest of GEMINI.md the notes': a paragraph in the section was
    read by neither."""
    put(memrepo.path, {"GEMINI.md": "# Project\n\nUse pnpm.\n\n## Gemini Added Memories\n- Prefers Python.\n\n"
                                    "The staging database is rebuilt every night.\n"})
    gemini = cli(["import", "gemini", "--from", str(memrepo.path), "--json"], cwd=memrepo.path)
    assert gemini.code == 0, gemini.err
    assert [item["text"] for item in json.loads(gemini.out)["proposals"]] == [
        "Prefers Python.", "The staging database is rebuilt every night."]
    notes = cli(["import", "notes", "--json"], cwd=memrepo.path)
    assert [item["text"] for item in json.loads(notes.out)["proposals"]] == ["Use pnpm."]


# Claude Code 2.1.197 (agent-cli/claude-code): `autoMemoryDirectory` in the user's settings moves auto memory, one
# folder for every project ("Supports ~/ prefix for home directory expansion"); a project's own settings are
# honoured only in a folder the user trusted.
TOPIC = "---\nname: db\ndescription: the database\ntype: project\n---\nThe project runs on Postgres 16.\n"


def test_claude_codes_auto_memory_is_read_and_written_where_the_users_settings_move_it(
        memrepo: GitRepo, cli: Cli, home: Path) -> None:  # noqa: F811
    put(home / ".claude", {"settings.json": json.dumps({"autoMemoryDirectory": "~/notes/claude"})})
    put(home / "notes" / "claude", {"project_db.md": TOPIC})
    result = cli(["import", "claude", "--json"], cwd=memrepo.path)
    assert result.code == 0, result.err
    assert [item["origin"].split(" · ")[1] for item in json.loads(result.out)["proposals"]] == [
        "~/notes/claude/project_db.md:6"]
    exported = cli(["export", "--to", "claude", "--cli-location", "--json"], cwd=memrepo.path)
    assert exported.code == 0, exported.err
    assert json.loads(exported.out)["directory"] == str(home / "notes" / "claude")
    assert (home / "notes" / "claude" / "MEMORY.md").exists()


@pytest.mark.parametrize("where", ["project", "outside home", "not absolute", "absolute after ~/"])
def test_a_choice_claude_code_would_not_take_leaves_auto_memory_in_its_default_place(
        memrepo: GitRepo, cli: Cli, home: Path, where: str) -> None:  # noqa: F811
    """A project's own settings (a cloned project's choice, which Claude Code takes only once trusted), and a
    value Claude Code refuses, never move the import or the export."""
    elsewhere = home / "elsewhere"
    put(elsewhere, {"project_db.md": TOPIC})
    if where == "project":
        put(memrepo.path / ".claude", {"settings.json": json.dumps({"autoMemoryDirectory": str(elsewhere)})})
    else:
        value = {"outside home": "~/../elsewhere", "not absolute": "elsewhere",
                 "absolute after ~/": f"~/{elsewhere}"}[where]          # `~//…` is no folder of the home
        put(home / ".claude", {"settings.json": json.dumps({"autoMemoryDirectory": value})})
    result = cli(["import", "claude"], cwd=memrepo.path)
    assert result.code == 2 and "GM952" in result.err, (result.out, result.err)
    assert f"/.claude/projects/{project_dir_name(memrepo.path)}/memory:1: GM952" in result.err


# Codex's memory files as the pinned release (agent-cli/codex) prompts its memory agents to write them: "`MEMORY.md`
# FORMAT (STRICT)", "`raw_memory` FORMAT (STRICT)", "`memory_summary.md` FORMAT (STRICT)".
CODEX_MEMORY = """# Task Group: gitmem repository / test runs
scope: running the test suite; use for any pytest run in this checkout
applies_to: cwd=/home/ana/gitmem; reuse_rule=safe across checkouts of this repository

## Task 1: run the interop tests, success
### rollout_summary_files
- rollout_summaries/2026-12-01T10-00-00-abcd-interop_tests.md (cwd=/home/ana/gitmem, updated_at=2026-12-01)
### keywords
- pytest, xdist, basetemp, interop

## User preferences
- when running tests, the user asked: "run only the tests you touched" -> run targeted tests [Task 1]

## Reusable knowledge
- the interop tests need no network [Task 1]

## Failures and how to do differently
- a shared basetemp made two runs collide -> give each run its own --basetemp [Task 1]
"""
CODEX_RAW = """# Raw Memories

description: ran the interop tests; targeted runs are faster
task: run interop tests
keywords: pytest, interop

### Task 1: run the interop tests
task: pytest tests/interop
Preference signals:
- when the run was slow, the user said: "use -n 2" -> run with two workers
Reusable knowledge:
- tests build real git repositories in temp dirs
Failures and how to do differently:
- the suite timed out on one core -> pass -n 2
"""
CODEX_SUMMARY = """v1

## User Profile
Ana maintains gitmem and prefers short, exact reports.

## User preferences
- report figures, not adjectives
"""


def test_codex_memories_land_by_what_each_part_of_codexs_format_holds(memrepo: GitRepo, cli: Cli,
                                                                      home: Path) -> None:  # noqa: F811
    put(home / ".codex" / "memories", {"MEMORY.md": CODEX_MEMORY, "raw_memories.md": CODEX_RAW,
                                       "memory_summary.md": CODEX_SUMMARY})
    result = cli(["import", "codex", "--json"], cwd=memrepo.path)
    assert result.code == 0, result.err
    data = json.loads(result.out)
    landed = {(item["file"].rsplit("/", 1)[1], item["line"]): item["lands"]
              for item in (*data["lessons"], *data["proposals"])}
    assert landed == {
        ("MEMORY.md", 12): "DECISIONS",    # a preference of the user's
        ("MEMORY.md", 15): "LESSONS",
        ("MEMORY.md", 18): "LESSONS",
        ("memory_summary.md", 4): "DECISIONS",     # the profile
        ("memory_summary.md", 7): "DECISIONS",
        ("raw_memories.md", 10): "DECISIONS",      # under `Preference signals:`
        ("raw_memories.md", 12): "LESSONS",
        ("raw_memories.md", 14): "LESSONS",
    }, "the task's index (its recaps' paths, its keywords) is no memory"
