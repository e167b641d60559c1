"""The `@path` imports gitmem follows are the ones the real CLIs load (Claude Code and Gemini CLI, pinned in
agent-cli/): a memory file imports inside a sentence, several on a line, and shows `@path`s in code, an e-mail
address and a package name; what reaches the model from the imported files is what `gitmem import` reads. Gemini
CLI's scan sees only backtick runs as code, so it alone loads an import shown in an indented block or a `~~~`
fence, which gitmem, as Claude Code, never follows; Claude Code alone takes one in bold or as a link's text, which
gitmem reads in the files Claude Code loads, never in Gemini CLI's global memory. Where CommonMark ends a list item
or an HTML block, Claude Code's lexer does too, and so does gitmem: a fence or a comment at column 0 under an item
runs to its own end, and a line indented under a comment's `-->` is code; a frontmatter is cut off before any import
is looked for, and one that is not YAML is hidden all the same; Gemini CLI shows the lines between the `---`s and
follows an import there, and Codex shows them too. Skipped, loudly, only where npm cannot install the CLIs."""
from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support import claude_code as cc
from tests.support import codex_cli as cx
from tests.support import fake_openai as fo
from tests.support import gemini_cli as gc
from tests.support.helpers import CliResult, GitRepo

pytestmark = pytest.mark.slow
PLAIN = "/usr/local/bin:/usr/bin:/bin"
# Each imported file says one word, so what reached the model and what gitmem read can be told apart.
WORDS = {"style": "Names say what things are.", "review": "Two reviewers sign a release.",
         "fenced": "A fenced example is no import.", "indented": "An indented example is no import.",
         "span": "A code span is no import.", "tilde": "A tilde fence is no import.",
         "bold": "Claude Code takes an import in bold.", "linked": "Claude Code takes an import as a link's text."}
MEMORY = ("# Team\n\nFollow @docs/style.md and @docs/review.md when you write code.\n\n```\n@docs/fenced.md\n```\n\n"
          "An example:\n\n    @docs/indented.md\n\nWrite `@docs/span.md` to import a file. "
          "Mail dana@example.com, or ping @types/node.\n\n~~~\n@docs/tilde.md\n~~~\n\n"
          "- Read **@docs/bold.md** and [@docs/linked.md](docs/linked.md) too.\n")


def imported_files() -> dict[str, str]:
    return {f"docs/{name}.md": f"- {text}\n" for name, text in WORDS.items()}


def reached(requests: list[str]) -> set[str]:
    return {name for name, text in WORDS.items() if any(text in body for body in requests)}


def read_by_gitmem(result: CliResult) -> set[str]:
    assert result.code == 0, result.err
    texts = [item["text"] for item in json.loads(result.out)["proposals"]]
    return {name for name, text in WORDS.items() if text in texts}


def put(where: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (where / rel).parent.mkdir(parents=True, exist_ok=True)
        (where / rel).write_text(text)


def what_claude_code_sent(repo: GitRepo, tmp_path: Path, files: dict[str, str]) -> list[str]:
    """The text of every request the real Claude Code sent its (fake) API after a "Say done." in `repo` holding
    `files`: what of the memory files reached its model."""
    claude = cc.claude_or_skip()
    home = tmp_path / "home"
    home.mkdir()
    put(repo.path, files)
    cc.trust(home, repo.path)
    fake = cc.FakeClaudeAPI(lambda body: cc.text("done"))
    with fake.serve() as url:
        done = cc.run_claude(claude, repo.path, cc.claude_env(home, url), prompt="Say done.")
    assert done.returncode == 0, done.stderr[-2000:]
    return [cc.request_text(body) for body in fake.requests]


def test_claude_code_loads_the_imports_gitmem_reads(memrepo: GitRepo, cli: Callable[..., CliResult],
                                                   tmp_path: Path) -> None:
    loaded = reached(what_claude_code_sent(memrepo, tmp_path, {"CLAUDE.md": MEMORY, **imported_files()}))
    assert loaded == {"style", "review", "bold", "linked"}
    assert read_by_gitmem(cli(["import", "notes", "--dry-run", "--json"], cwd=memrepo.path)) == loaded


def test_gemini_cli_loads_the_global_memorys_imports_gitmem_reads(memrepo: GitRepo, cli: Callable[..., CliResult],
                                                                   tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    gemini = gc.gemini_or_skip()
    home = gc.gemini_home(tmp_path / "home")
    put(home / ".gemini", {"GEMINI.md": MEMORY, **imported_files()})
    fake = gc.FakeGeminiAPI(lambda body: [{"text": "done"}])
    with fake.serve() as url:
        done = subprocess.run([str(gemini), "-p", "Say done.", "--output-format", "json"], cwd=memrepo.path,
                              env=gc.gemini_env(home, url, PLAIN), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = reached([json.dumps(body, ensure_ascii=False) for _, body in fake.requests])
    assert loaded == {"style", "review", "indented", "tilde"}, "Gemini CLI takes only backtick runs for code"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("GEMINI_CLI_HOME", raising=False)
    read = read_by_gitmem(cli(["import", "gemini", "--dry-run", "--json"], cwd=memrepo.path))
    assert read == loaded - {"indented", "tilde"}, "an import in bold or a link's text is only Claude Code's"


# Each shape hides the import of one file from Claude Code, beside one it loads; the words say which reached it.
EDGES = {"item": "An item's import is loaded.", "fenced": "A fence under an item is no import.",
         "after": "The prose after a fence is loaded.", "commented": "A comment under an item is no import.",
         "indented": "A line indented under a comment's end is code.", "front": "A frontmatter holds no import."}
EDGE_MEMORY = ("---\ndescription: see @docs/front.md\n---\n\n- Read @docs/item.md first\n```\nmake @docs/fenced.md\n"
               "```\nThen @docs/after.md too.\n\n- Switch it on\n<!-- off\nhidden @docs/commented.md line\n-->\n\n"
               "<!-- aside --> See the item above.\n    shown @docs/indented.md in code\n")


def test_claude_code_ends_items_comments_and_the_frontmatter_where_gitmem_does(
        memrepo: GitRepo, cli: Callable[..., CliResult], tmp_path: Path) -> None:
    edges = {f"docs/{name}.md": f"- {text}\n" for name, text in EDGES.items()}
    bodies = what_claude_code_sent(memrepo, tmp_path, {"CLAUDE.md": EDGE_MEMORY, **edges})
    loaded = {name for name, text in EDGES.items() if any(text in body for body in bodies)}
    assert loaded == {"item", "after"}
    result = cli(["import", "notes", "--dry-run", "--json"], cwd=memrepo.path)
    assert result.code == 0, result.err
    texts = [item["text"] for item in json.loads(result.out)["proposals"]]
    assert {name for name, text in EDGES.items() if text in texts} == loaded


def test_claude_code_hides_a_frontmatter_that_is_not_yaml_and_loads_the_rest_as_gitmem_imports_them(
        memrepo: GitRepo, cli: Callable[..., CliResult], tmp_path: Path) -> None:
    bodies = what_claude_code_sent(
        memrepo, tmp_path, {"CLAUDE.md": "---\nHidden words: not: YAML\n---\n\n- Review every pull request.\n"})
    assert any("Review every pull request." in body for body in bodies)
    assert not any("Hidden words" in body for body in bodies)
    result = cli(["import", "notes", "--dry-run", "--json"], cwd=memrepo.path)
    assert result.code == 0, result.err
    data = json.loads(result.out)
    assert [item["text"] for item in data["proposals"]] == ["Review every pull request."]
    assert [(item["target"], item["kind"]) for item in data["not_read"]] == [("1-3", "frontmatter")]


def test_gemini_cli_shows_the_lines_between_dashes_and_follows_their_import_as_gitmem_reads_them(
        memrepo: GitRepo, cli: Callable[..., CliResult], tmp_path: Path) -> None:
    gemini = gc.gemini_or_skip()
    home = gc.gemini_home(tmp_path / "home")
    put(memrepo.path, {"GEMINI.md": "---\nUse pnpm, never npm. See @docs/extra.md\n---\n- Lint first.\n",
                       "docs/extra.md": "- Extra words from an import.\n"})
    fake = gc.FakeGeminiAPI(lambda body: [{"text": "done"}])
    with fake.serve() as url:
        done = subprocess.run([str(gemini), "-p", "Say done.", "--output-format", "json"], cwd=memrepo.path,
                              env=gc.gemini_env(home, url, PLAIN), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    bodies = [json.dumps(body, ensure_ascii=False) for _, body in fake.requests]
    shown = {text for text in ("Use pnpm, never npm.", "Extra words from an import.", "Lint first.")
             if any(text in body for body in bodies)}
    assert shown == {"Use pnpm, never npm.", "Extra words from an import.", "Lint first."}
    result = cli(["import", "notes", "--dry-run", "--json"], cwd=memrepo.path)
    assert result.code == 0, result.err
    assert [item["text"] for item in json.loads(result.out)["proposals"]] == [
        "Use pnpm, never npm. See @docs/extra.md", "Lint first.", "Extra words from an import."]


def test_codex_shows_the_lines_between_an_agents_mds_dashes_as_gitmem_reads_them(
        memrepo: GitRepo, cli: Callable[..., CliResult], tmp_path: Path) -> None:
    codex = cx.codex_or_skip()
    home = tmp_path / "home"
    home.mkdir()
    put(memrepo.path, {"AGENTS.md": "---\nImportant: never force-push main.\n---\n- Review every pull request.\n"})
    fake = fo.FakeResponsesAPI(cx.script(finish="ok"))
    with fake.serve() as url:
        cx.machine_config(home / ".codex", url)
        done = cx.run_codex(codex, memrepo.path, cx.codex_env(home, codex), "exec", "--json", "-", prompt="Say ok.")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "---\\nImportant: never force-push main.\\n---" in fo.request_text(fake.requests[0])
    result = cli(["import", "notes", "--dry-run", "--json"], cwd=memrepo.path)
    assert result.code == 0, result.err
    assert [item["text"] for item in json.loads(result.out)["proposals"]] == [
        "Important: never force-push main.", "Review every pull request."]
