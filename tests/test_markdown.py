"""The structure inside entries, read with mistune: plain text for search, nesting kept."""
from __future__ import annotations

from gitmem.memory.markdown import plain_lines, plain_text


def test_markup_is_removed_and_each_item_is_one_line():
    body = ("- Task: Ship **hello**.py and [the docs](https://example.com/docs)\n"
            "  continued with `code`\n"
            "- Result: ok\n"
            "  - nested *point*\n")
    assert plain_lines(body) == ["Task: Ship hello.py and the docs continued with code", "Result: ok",
                                 "  nested point"]


def test_paragraphs_and_code_blocks_keep_their_words():
    assert plain_text("A free paragraph\nover two lines.\n\n```\nmake test\n```\n") == \
        "A free paragraph over two lines.\nmake test"


def test_empty_body():
    assert plain_text("") == ""


def test_recall_finds_words_inside_markup_and_shows_no_markers(memrepo, cli):
    cli(["log", "add", "--task", "Tune the **zeppelin** cache", "--outcome", "built",
         "--result", "see [the zeppelin notes](https://example.com)"], cwd=memrepo.path)
    result = cli(["recall", "zeppelin", "--json"], cwd=memrepo.path)
    assert result.code == 0, result.err
    import json

    hits = json.loads(result.out)
    assert hits and hits[0]["kind"] == "log"
    assert "](https" not in hits[0]["snippet"] and "- Task:" not in hits[0]["snippet"]
