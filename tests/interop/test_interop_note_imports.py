"""`gitmem import notes` of the files the project's instruction files import with `@path` lines, as Claude Code
loads them (code.claude.com/docs/en/memory, "Import additional files": a path relative to the importing file,
five hops deep), in a real repository: the project's markdown files are read, nothing outside the project is,
and what is not read is said, stopping nothing."""
from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from gitmem.interop.at_imports import at_imports
from gitmem.interop.shapes import import_lines
from tests.interop.test_interop_import import home, put  # noqa: F401 (fixture)
from tests.support.helpers import CliResult, GitRepo

Cli = Callable[..., CliResult]


def proposals(result: CliResult) -> list[tuple[str, int, str]]:
    assert result.code == 0, result.err
    return [(item["file"], item["line"], item["text"]) for item in json.loads(result.out)["proposals"]]


def test_the_files_an_instruction_file_imports_are_read_where_claude_code_loads_them(
        memrepo: GitRepo, cli: Cli, home: Path) -> None:  # noqa: F811
    put(memrepo.path, {
        "CLAUDE.md": "# Project\n\n@docs/conventions.md\n- @./team/style.md\n\nShip on Fridays.\n",
        "docs/conventions.md": "# Conventions\n\n- Errors name the file and line.\n\n@../team/style.md\n",
        "team/style.md": "Names say what things are.\n\n@deep/more.md\n",
        "team/deep/more.md": "- Comments say why.\n",
        ".claude/rules/testing.md": "---\npaths:\n  - \"tests/**\"\n---\n\n@../../docs/conventions.md\n"})
    result = cli(["import", "notes", "--json"], cwd=memrepo.path)
    assert sorted(proposals(result)) == sorted([
        ("./CLAUDE.md", 6, "Ship on Fridays."),
        ("./docs/conventions.md", 3, "Errors name the file and line."),
        ("./team/style.md", 1, "Names say what things are."),
        ("./team/deep/more.md", 1, "Comments say why.")]), "each imported file read once, relative to its importer"
    assert json.loads(result.out)["not_read"] == []
    again = cli(["import", "notes"], cwd=memrepo.path)
    assert again.code == 0 and "Nothing new to import." in again.out, again.err


def test_an_import_outside_the_project_or_of_no_notes_is_not_read_and_said_why(
        memrepo: GitRepo, cli: Cli, home: Path, tmp_path: Path) -> None:  # noqa: F811
    put(home, {".claude/mine.md": "- My private preference at home.\n"})
    put(tmp_path, {"outside.md": "- A file beside the repository.\n"})
    put(memrepo.path, {
        "CLAUDE.md": "@~/.claude/mine.md\n@../outside.md\n@docs/missing.md\n@logo.png\n"
                     f"@{tmp_path / 'outside.md'}\n\n- Keep the build green.\n",
        "logo.png": b"\x89PNG\r\n\x1a\n\x00\x00"})
    result = cli(["import", "notes", "--json"], cwd=memrepo.path)
    assert proposals(result) == [("./CLAUDE.md", 7, "Keep the build green.")], "nothing outside is read"
    not_read = {(item["line"], item["target"]): item["reason"] for item in json.loads(result.out)["not_read"]}
    assert sorted(not_read) == [(1, "~/.claude/mine.md"), (2, "../outside.md"), (3, "docs/missing.md"),
                                (4, "logo.png"), (5, str(tmp_path / "outside.md"))]
    assert "outside the project" in not_read[(1, "~/.claude/mine.md")]
    assert "outside the project" in not_read[(2, "../outside.md")]
    assert "no such file" in not_read[(3, "docs/missing.md")]
    assert "not a markdown file" in not_read[(4, "logo.png")]
    text = cli(["import", "notes", "--dry-run"], cwd=memrepo.path)
    assert text.code == 0, text.err
    assert "./CLAUDE.md:1: @~/.claude/mine.md not read, outside the project" in text.out
    assert "private preference" not in text.out + text.err


def test_imports_that_name_each_other_or_run_deep_end(memrepo: GitRepo, cli: Cli, home: Path) -> None:  # noqa: F811
    chain = {f"d/{n}.md": f"- Note {n}.\n\n@{n + 1}.md\n" for n in range(1, 8)}
    put(memrepo.path, {"CLAUDE.md": "@d/1.md\n@loop/a.md\n",
                       "loop/a.md": "- In a.\n@b.md\n", "loop/b.md": "- In b.\n@a.md\n", **chain})
    result = cli(["import", "notes", "--json"], cwd=memrepo.path)
    texts = sorted(text for _, _, text in proposals(result))
    assert texts == sorted(["In a.", "In b."] + [f"Note {n}." for n in range(1, 6)]), "five hops, each file once"
    assert [(item["file"].rsplit("/", 2)[-2:], item["target"]) for item in json.loads(result.out)["not_read"]] == [
        (["d", "5.md"], "6.md")]


def test_an_imported_file_that_is_a_link_stops_the_import_as_any_source_files_link(
        memrepo: GitRepo, cli: Cli, home: Path, tmp_path: Path) -> None:  # noqa: F811
    put(tmp_path, {"secret.md": "- A file the link leads to.\n"})
    put(memrepo.path, {"CLAUDE.md": "@docs/linked.md\n\n- A note.\n"})
    (memrepo.path / "docs").mkdir()
    os.symlink(tmp_path / "secret.md", memrepo.path / "docs" / "linked.md")
    before = memrepo.read("DECISIONS.md")
    result = cli(["import", "notes"], cwd=memrepo.path)
    assert result.code == 1, result.out
    assert "docs/linked.md:1: GM950" in result.err and "import reads no link" in result.err
    assert "leads to" not in result.out + result.err
    assert memrepo.read("DECISIONS.md") == before


def test_a_secret_in_an_import_path_is_masked_where_it_is_said(memrepo: GitRepo, cli: Cli, home: Path,  # noqa: F811
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    token = "tok3n-9f8e7d6c5b4a39281706"
    monkeypatch.setenv("DEPLOY_TOKEN", token)
    put(memrepo.path, {"CLAUDE.md": f"@~/notes-{token}.md\n"})
    result = cli(["import", "notes", "--dry-run", "--json"], cwd=memrepo.path)
    assert result.code == 0, result.err
    assert token not in result.out + result.err
    assert json.loads(result.out)["not_read"][0]["line"] == 1


def test_copilots_path_specific_instructions_and_geminis_named_context_files_are_read(
        memrepo: GitRepo, cli: Cli, home: Path) -> None:  # noqa: F811
    """GitHub Copilot CLI loads every `*.instructions.md` below `.github/instructions/` (its `applyTo:` says for which
    files, and so does each note);
    Gemini CLI loads the context files the project's `.gemini/settings.json` names (`context.fileName`)."""
    put(memrepo.path, {
        ".github/instructions/python/tests.instructions.md": '---\napplyTo: "**/*.py"\n---\n\n- Use pytest.\n',
        ".github/instructions/README.md": "- not an instructions file: its name does not end in .instructions.md\n",
        ".gemini/settings.json": '{"context": {"fileName": ["CONTEXT.md", "GEMINI.md", "../up.md"]}}',
        "CONTEXT.md": "# Context\n\nThe staging server restarts at noon.\n"})
    assert sorted(proposals(cli(["import", "notes", "--json"], cwd=memrepo.path))) == [
        ("./.github/instructions/python/tests.instructions.md", 5, "(for **/*.py) Use pytest."),
        ("./CONTEXT.md", 3, "The staging server restarts at noon.")]


def test_a_packages_own_instruction_files_are_read_where_git_tracks_them(
        memrepo: GitRepo, cli: Cli, home: Path) -> None:  # noqa: F811
    """In a monorepo each package keeps its own CLAUDE.md or AGENTS.md, which the CLIs load when they work there;
    git's index names them, so an ignored folder (node_modules) is never walked."""
    memrepo.commit_files({"packages/api/CLAUDE.md": "- The API answers in JSON only.\n",
                          "packages/web/AGENTS.md": "- The web app builds with Vite.\n",
                          "packages/web/notes.md": "- not an instruction file\n"}, "packages")
    put(memrepo.path, {"node_modules/left-pad/AGENTS.md": "- not the project's: git does not track it\n"})
    assert sorted(proposals(cli(["import", "notes", "--json"], cwd=memrepo.path))) == [
        ("./packages/api/CLAUDE.md", 1, "The API answers in JSON only."),
        ("./packages/web/AGENTS.md", 1, "The web app builds with Vite.")]


def test_claude_md_kept_as_a_link_to_agents_md_is_read_once_as_agents_md(
        memrepo: GitRepo, cli: Cli, home: Path, tmp_path: Path) -> None:  # noqa: F811
    """A project that keeps one file for every CLI makes CLAUDE.md a link to AGENTS.md: the file is read once, as
    itself; a link to another file of the project reads that file; a link out of the project is still refused."""
    put(memrepo.path, {"AGENTS.md": "- Run make test before pushing.\n",
                       "docs/gemini-notes.md": "- Gemini reviews the docs.\n"})
    os.symlink("AGENTS.md", memrepo.path / "CLAUDE.md")
    os.symlink("docs/gemini-notes.md", memrepo.path / "GEMINI.md")
    assert sorted(proposals(cli(["import", "notes", "--json"], cwd=memrepo.path))) == [
        ("./AGENTS.md", 1, "Run make test before pushing."),
        ("./docs/gemini-notes.md", 1, "Gemini reviews the docs.")]
    put(tmp_path, {"elsewhere.md": "- a file out of the project\n"})
    os.symlink(tmp_path / "elsewhere.md", memrepo.path / "QWEN.md")
    refused = cli(["import", "notes"], cwd=memrepo.path)
    assert refused.code == 1 and "QWEN.md:1: GM950" in refused.err and "out of its directory" in refused.err


def test_an_at_sign_in_code_is_no_import(memrepo: GitRepo, cli: Cli, home: Path) -> None:  # noqa: F811
    put(memrepo.path, {"CLAUDE.md": "# Style\n\n```python\n@dataclass\nclass Point: ...\n```\n\n"
                                    "Prefer dataclasses.\n@docs/more.md\n",
                       "docs/more.md": "- Frozen where it can be.\n"})
    result = cli(["import", "notes", "--json"], cwd=memrepo.path)
    assert sorted(proposals(result)) == [("./CLAUDE.md", 8, "Prefer dataclasses."),
                                         ("./docs/more.md", 1, "Frozen where it can be.")]
    assert json.loads(result.out)["not_read"] == [], "a decorator in a fence names no file"


def test_an_import_inside_a_sentence_is_read_and_so_are_several_on_a_line(
        memrepo: GitRepo, cli: Cli, home: Path) -> None:  # noqa: F811
    """Claude Code and Gemini CLI take an `@path` anywhere in the text after whitespace, not only at a line's
    start; the sentence holding them stays a note of its own."""
    put(memrepo.path, {
        "CLAUDE.md": "# Project\n\nFollow @docs/style.md and @docs/review.md#checklist when you write code.\n"
                     "- Emphasis counts too: **@docs/emphasis.md**\n",
        "docs/style.md": "- Names say what things are.\n",
        "docs/review.md": "- Two reviewers sign a release.\n",
        "docs/emphasis.md": "- Bold imports load as well.\n"})
    result = cli(["import", "notes", "--json"], cwd=memrepo.path)
    assert sorted(proposals(result)) == sorted([
        ("./CLAUDE.md", 3, "Follow @docs/style.md and @docs/review.md#checklist when you write code."),
        ("./CLAUDE.md", 4, "Emphasis counts too: **@docs/emphasis.md**"),
        ("./docs/style.md", 1, "Names say what things are."),
        ("./docs/review.md", 1, "Two reviewers sign a release."),
        ("./docs/emphasis.md", 1, "Bold imports load as well.")])
    assert json.loads(result.out)["not_read"] == []


def test_an_import_shown_in_code_is_never_read(memrepo: GitRepo, cli: Cli, home: Path) -> None:  # noqa: F811
    """Inline code, a fenced block (``` or ~~~), an indented block and a comment show an `@path`; neither CLI loads
    it, so the file it names is never read, and the import after them still is."""
    put(memrepo.path, {
        "CLAUDE.md": "# Imports\n\nWrite `@secret.md` to import a file.\n\n```md\n@secret.md\n```\n\n"
                     "~~~\nSee @secret.md here.\n~~~\n\nAn indented block:\n\n    @secret.md\n\n"
                     "<!-- @secret.md -->\nThe real one is @docs/ok.md in prose.\n",
        "secret.md": "- The deploy key sits in the vault.\n",
        "docs/ok.md": "- Imports outside code load.\n"})
    result = cli(["import", "notes", "--json"], cwd=memrepo.path)
    found = proposals(result)
    assert [item for item in found if item[0] == "./secret.md"] == [], "a path shown in code is never followed"
    assert "vault" not in result.out + result.err
    assert ("./docs/ok.md", 1, "Imports outside code load.") in found
    assert json.loads(result.out)["not_read"] == []


def test_an_email_address_or_a_package_scope_is_no_import(memrepo: GitRepo, cli: Cli, home: Path) -> None:  # noqa: F811
    """`dana@example.com` has no `@` after whitespace; `@types/node` has a path's shape and names no file, which the
    CLIs look for and read nothing (a folder's `@src` too): none is read nor said to be left unread, and the lines
    are notes."""
    put(memrepo.path, {"CLAUDE.md": "- Mail dana@example.com about releases.\n"
                                    "- Pin @types/node and @google/gemini-cli in package.json.\n"
                                    "@babel/core is built by the vendored script.\n- The code lives in @src\n",
                       "src/app.py": "print('hi')\n"})
    result = cli(["import", "notes", "--json"], cwd=memrepo.path)
    assert sorted(proposals(result)) == [
        ("./CLAUDE.md", 1, "Mail dana@example.com about releases."),
        ("./CLAUDE.md", 2, "Pin @types/node and @google/gemini-cli in package.json."),
        ("./CLAUDE.md", 3, "@babel/core is built by the vendored script."),
        ("./CLAUDE.md", 4, "The code lives in @src")]
    assert json.loads(result.out)["not_read"] == []


def test_an_import_is_found_as_claude_codes_markdown_lexer_finds_it() -> None:
    """Code inside a list item is indented four past the item's text; a link's text ends at `]`; `@@name` and `@/`
    are no paths; a `#fragment` is cut and an escaped space is a space (Claude Code's extractor of include paths)."""
    text = ("- An item\n\n      @in-item-code.md\n\n  Still the item: [@linked.md](linked.md) and @@twice.md\n"
            "@/ alone, then @with\\ space.md#part\n")
    assert import_lines(text) == [(5, "linked.md"), (6, "with space.md")]


@pytest.mark.parametrize("gemini_only", [False, True])
def test_the_text_after_a_comments_end_holds_imports(gemini_only: bool) -> None:
    """What follows `-->` on its line is text, whether the comment opened on that line or above, and both CLIs
    follow an import there: marking the whole line a comment's lost all three (the comment's own `@x.md` stays
    hidden)."""
    text = ("<!-- x --> @one.md\n\n<!-- x @x.md --> see @two.md\n\n<!-- switched off\nhidden @x.md\n"
            "@x.md -->  @three.md\n")
    assert at_imports(text, gemini_only=gemini_only) == [(1, "one.md"), (3, "two.md"), (7, "three.md")]


CODE_SHAPES = {
    "an indented block": ("Intro @f1.md here.\n\n    indented code @f2.md line\n\nAfter @f3.md too.\n", {1, 3}),
    "a tilde fence indented past a paragraph's text": ("Some prose @f1.md\n    ~~~\nstill the paragraph @f2.md\n",
                                                       {1, 2}),
    "a fence inside a list item": ("- Run it like @f1.md\n\n  ```\n  make @f2.md\n- Next fact @f3.md\n\n"
                                   "1. Build @f4.md\n\n       code @f5.md\n", {1, 3, 4}),
    "a fence inside a comment": ("<!-- shown like\n```\n-->\nAfter @f1.md the comment.\n", {1}),
    "a comment left open": ("Prose @f1.md here.\n\n<!-- switched off\nhidden @f2.md line\n", {1}),
    "the text after a comment's end": ("<!-- off @f1.md --> Then @f2.md in prose.\n\n<!-- switched off @f3.md\n"
                                       "hidden @f4.md -->  After @f5.md the comment.\n", {2, 5}),
    "a fence at column 0 under a list item": ("- Run it like @f1.md\n```\nmake @f2.md\n```\nAfter @f3.md the fence.\n",
                                              {1, 3}),
    "a comment at column 0 under a list item": ("- Switch @f1.md on\n<!-- off\nhidden @f2.md line\n-->\n"
                                                "After @f3.md the comment.\n", {1, 3}),
    "an indented line under a comment's end": ("<!-- off --> Then @f1.md in prose.\n    shown @f2.md in code\n", {1}),
}


@pytest.mark.parametrize("shape", CODE_SHAPES)
def test_notes_and_imports_agree_on_which_lines_are_code(memrepo: GitRepo, cli: Cli, home: Path,  # noqa: F811
                                                         shape: str) -> None:
    """Each line names its own file in a sentence: a line the notes take for text is in a note, and the file it
    names is read as an import; a line of code is neither, to both."""
    text, prose = CODE_SHAPES[shape]
    put(memrepo.path, {"CLAUDE.md": text, **{f"f{n}.md": f"- From f{n}.\n" for n in range(1, 6)}})
    result = cli(["import", "notes", "--json"], cwd=memrepo.path)
    found = proposals(result)
    noted = {n for n in range(1, 6) if any(f"@f{n}.md" in said for file, _, said in found if file == "./CLAUDE.md")}
    imported = {n for n in range(1, 6) if (f"./f{n}.md", 1, f"From f{n}.") in found}
    assert (noted, imported) == (prose, prose), shape
    assert json.loads(result.out)["not_read"] == []
