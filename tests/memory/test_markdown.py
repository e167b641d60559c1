"""The structure inside entries, read with mistune: plain text for search, nesting kept."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from gitmem.memory import markdown
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

    hits = json.loads(result.out)["hits"]
    assert hits and hits[0]["kind"] == "log"
    assert "](https" not in hits[0]["snippet"] and "- Task:" not in hits[0]["snippet"]


WORDS = st.one_of(
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), min_size=1, max_size=30),
    st.sampled_from(["- nested", "1. first", "# head", "> quote", "+ plus", "* star", "2) two", "a  ", "==",
                     "no-build 2026-11-30", "x: y", "    code"]))


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.tuples(WORDS, st.lists(WORDS, max_size=2)), min_size=1, max_size=6))
def test_the_fast_path_reads_exactly_what_mistune_reads(items):
    """Whenever the fast path accepts a body, its plain text equals mistune's."""
    lines = []
    for first, continuations in items:
        lines.append(f"- {first.strip() or 'x'}")
        lines += [f"  {c.strip() or 'y'}" for c in continuations]
        if len(first) % 3 == 0:
            lines.append("")                     # loose lists too
    body = "\n".join(lines) + "\n"
    fast = markdown._simple_items(body)
    if fast is None:
        return
    slow: list[str] = []
    markdown._blocks(markdown._parser()(body), 0, slow)
    assert [x for x in fast if x.strip()] == [x for x in slow if x.strip()]


def test_the_fast_path_takes_plain_log_entries():
    assert markdown._simple_items("- Task: ship it\n  today\n- Result: done\n") == ["Task: ship it today",
                                                                                    "Result: done"]
    assert markdown._simple_items("- Task: ship **it**\n") is None
