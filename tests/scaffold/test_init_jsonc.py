"""`gitmem init --agent` on settings files with comments (JSONC): Gemini CLI and Qwen Code read `settings.json`
through strip-json-comments, OpenCode reads `opencode.json` through jsonc-parser with trailing commas allowed. A
user's commented file was refused as "not valid JSON"; now it is edited in place, every comment kept, and a change
that would lose a comment is refused with the line it would touch."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from gitmem.scaffold import jsonc
from gitmem.scaffold.agent_clis import GEMINI_SPEC, opencode_server
from gitmem.scaffold.init import init

GEMINI_SETTINGS = """\
{
  // my look
  "theme": "Dracula", /* chosen on a dark evening */
  "mcpServers": {
    "search": {"command": "search-mcp"}  // keep this one first
  },
  "context": {
    "fileName": ["GEMINI.md", "CONTEXT.md"], // both read
  },
}
"""

OPENCODE_CONFIG = """\
{
  "$schema": "https://opencode.ai/config.json",
  // the model I pay for
  "model": "anthropic/claude-sonnet-4-5",
  "mcp": {
    /* none yet */
  },
}
"""


def _comments(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip().startswith(("//", "/*"))]


def test_gemini_settings_with_comments_get_the_server_and_keep_every_comment(tmp_path: Path) -> None:
    (tmp_path / ".gemini").mkdir()
    (tmp_path / ".gemini" / "settings.json").write_text(GEMINI_SETTINGS)
    report = init(tmp_path, ["gemini"])
    assert report.problems == [] and ".gemini/settings.json" in report.updated, report.problems
    text = (tmp_path / ".gemini" / "settings.json").read_text()
    for comment in ("// my look", "/* chosen on a dark evening */", "// keep this one first", "// both read"):
        assert comment in text, text
    settings = jsonc.loads(text)
    assert settings == {"theme": "Dracula",
                        "mcpServers": {"search": {"command": "search-mcp"}, "gitmem": GEMINI_SPEC},
                        "context": {"fileName": ["GEMINI.md", "CONTEXT.md", "AGENTS.md"]}}
    assert list(settings["mcpServers"]) == ["search", "gitmem"]
    before = text
    assert init(tmp_path, ["gemini"]).problems == []
    assert (tmp_path / ".gemini" / "settings.json").read_text() == before       # twice: a no-op


def test_opencode_json_with_comments_and_trailing_commas_gets_the_server(tmp_path: Path) -> None:
    (tmp_path / "opencode.json").write_text(OPENCODE_CONFIG)
    report = init(tmp_path, ["opencode"])
    assert report.problems == [] and "opencode.json" in report.updated, report.problems
    text = (tmp_path / "opencode.json").read_text()
    assert _comments(text) == ["// the model I pay for", "/* none yet */"], text
    assert jsonc.loads(text) == {"$schema": "https://opencode.ai/config.json",
                                 "model": "anthropic/claude-sonnet-4-5", "mcp": {"gitmem": opencode_server()}}
    assert text.startswith(OPENCODE_CONFIG[:OPENCODE_CONFIG.index('  "mcp"')])   # the lines above, byte for byte


def test_a_change_that_would_lose_a_comment_is_refused_with_its_line(tmp_path: Path) -> None:
    """An older init's bare `gitmem` server gets today's command and arguments; where its arguments hold the user's
    comment, rewriting them would lose it, so the file is left alone and the problem names the line."""
    text = '{\n  "mcpServers": {\n    "gitmem": {\n      "command": "gitmem",\n      "args": [\n' \
           '        // started by hand\n        "mcp"\n      ]\n    }\n  }\n}\n'
    (tmp_path / ".gemini").mkdir()
    (tmp_path / ".gemini" / "settings.json").write_text(text)
    report = init(tmp_path, ["gemini"])
    (problem,) = [p for p in report.problems if "settings.json" in p]
    assert "holds comments" in problem and "line 5" in problem, problem
    assert (tmp_path / ".gemini" / "settings.json").read_text() == text
    # Without the comment in the way the same entry is renewed in place, the comment beside it kept.
    (tmp_path / ".gemini" / "settings.json").write_text(text.replace("        // started by hand\n", "").replace(
        '"command": "gitmem",', '"command": "gitmem", // started by hand'))
    assert [p for p in init(tmp_path, ["gemini"]).problems if "settings.json" in p] == []
    renewed = (tmp_path / ".gemini" / "settings.json").read_text()
    assert "// started by hand" in renewed and jsonc.loads(renewed)["mcpServers"]["gitmem"]["command"] == "sh"


def test_broken_jsonc_names_its_line(tmp_path: Path) -> None:
    (tmp_path / "opencode.json").write_text('{\n  // fine\n  "mcp": {\n    "x": 1\n    "y": 2\n  }\n}\n')
    report = init(tmp_path, ["opencode"])
    (problem,) = [p for p in report.problems if "opencode.json" in p]
    assert "not valid JSON" in problem and "line 5" in problem, problem


def test_a_plain_json_file_is_still_written_whole() -> None:
    assert jsonc.is_plain('{"a": [1, "// not a comment", "/* nor this */"]}\n')
    assert not jsonc.is_plain('{"a": 1, }') and not jsonc.is_plain('{"a": 1} // c')
    assert json.loads(jsonc.blanked('{"a": "x//y", /* c */ "b": [1,2,],}')) == {"a": "x//y", "b": [1, 2]}


def test_a_repeated_key_before_the_last_member_still_gets_its_comma(tmp_path: Path) -> None:
    """json reads a repeated key as its last one; the edit took the key's first place for the object's last
    member, saw a comma after it, and added none after the real last one: the settings file it wrote was broken."""
    (tmp_path / ".gemini").mkdir()
    settings = tmp_path / ".gemini" / "settings.json"
    settings.write_text('{\n  "theme": "Light",\n  "vim": true, // mine\n  "theme": "Dracula"\n}\n')
    report = init(tmp_path, ["gemini"])
    assert report.problems == [] and ".gemini/settings.json" in report.updated, report.problems
    text = settings.read_text()
    assert "// mine" in text and jsonc.loads(text)["mcpServers"]["gitmem"] == GEMINI_SPEC, text
    assert jsonc.loads(text)["theme"] == "Dracula"


def test_a_file_with_mixed_line_ends_keeps_each_line_s_own(tmp_path: Path) -> None:
    """A settings file with CRLF on some lines and LF on others came back with CRLF on every line: each line now
    keeps its own end, a changed line the end of the line it replaces, an added line the end of the line above."""
    (tmp_path / ".gemini").mkdir()
    settings = tmp_path / ".gemini" / "settings.json"
    settings.write_bytes(b'{\r\n  // my look\n  "theme": "Dracula"\r\n}\n')
    report = init(tmp_path, ["gemini"])
    assert report.problems == [] and ".gemini/settings.json" in report.updated, report.problems
    lines = settings.read_bytes().splitlines(keepends=True)
    assert lines[:3] == [b"{\r\n", b"  // my look\n", b'  "theme": "Dracula",\r\n'], lines
    assert lines[-1] == b"}\n" and all(line.endswith(b"\r\n") for line in lines[3:-1]), lines
    assert jsonc.loads(settings.read_text())["mcpServers"]["gitmem"] == GEMINI_SPEC


def test_an_edit_that_would_not_read_back_is_refused_for_what_it_is_not_for_a_comment() -> None:
    """The read-back refusal said "would lose one (line 1: …)", though no comment was lost and line 1 was no
    place in particular: it is its own refusal, in words for what happened. (A value json reads back as another,
    NaN, stands for an edit that went wrong.)"""
    text = '{\n  "a": 1 // mine\n}\n'
    with pytest.raises(jsonc.UnfaithfulEdit) as refused:
        jsonc.edited(text, {"a": 1}, {"a": 1, "b": float("nan")})
    assert str(refused.value) == "edited in place, it would not read back as the settings gitmem means"
