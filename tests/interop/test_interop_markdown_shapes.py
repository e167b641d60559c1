"""The list items of a source's markdown as Markdown (CommonMark) reads them: bulleted or numbered; a code fence or
an HTML comment that opens inside an item ends with that item, one at column 0 under an item ends the item and runs
to its own end, and a fence closes only on its own kind of fence. A malformed item never swallows the facts after
it in silence."""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import mistune
import pytest

from gitmem.interop.shapes import blocks
from tests.interop.test_interop_import import home, put  # noqa: F401 (fixture)
from tests.support.helpers import CliResult, GitRepo

Cli = Callable[..., CliResult]

SOURCES = {
    "an unclosed fence in an item": "- Run it like\n  ```\n- second fact\n- third fact\n",
    "an unclosed comment in an item": "- Run it like\n  <!-- a note\n- second fact\n- third fact\n",
    "a fence closed by the other kind": "- first\n\n```\ncode\n~~~\n- not a fact\n```\n- second fact\n",
    "a short fence in a long one": "- first\n\n````\n```\n- not a fact\n````\n- second fact\n",
    "numbered items": "Steps, as in\n1984. A good year\n\n1. Build it\n2) Test it\n",
    "a fence at column 0 under an item": "- first\n```\n- not a fact\n```\n- second fact\n",
    "a comment at column 0 under an item": "- first\n<!-- off\n- not a fact\n-->\n- second fact\n",
}


def markdown_items(text: str) -> list[str]:
    """The first line of each top-level list item as mistune (a CommonMark parser) reads `text`."""
    found = []
    for node in mistune.create_markdown(renderer=None)(text):
        for item in node.get("children", []) if node["type"] == "list" else []:
            first = item["children"][0]
            found.append("".join(child.get("raw", "") for child in first.get("children", [])))
    return found


@pytest.mark.parametrize("name", SOURCES)
def test_bullets_are_the_list_items_markdown_reads(name: str) -> None:
    text = SOURCES[name]
    got = [block.text.split("\n", 1)[0] for block in blocks(text) if block.bullet]
    assert got == markdown_items(text), name


def markdown_paragraphs(text: str) -> list[str]:
    """The text of each top-level paragraph as mistune reads `text`: no heading, no thematic break."""
    return ["".join(child.get("raw", "") or "\n" for child in node["children"])
            for node in mistune.create_markdown(renderer=None)(text) if node["type"] == "paragraph"]


def test_a_setext_heading_and_a_thematic_break_are_no_notes() -> None:
    """`===` or `---` under a paragraph makes it a heading (`One more. Still it.` too), and the notes below stand
    under it; a line of `***` or `- - -` elsewhere is a break between notes, none itself."""
    text = "Team rules\n==========\n\nShip on Fridays.\n\n***\n\nTabs in Makefiles.\n- - -\nOne more.\nStill it.\n---\n"
    found = list(blocks(text))
    assert [block.text for block in found] == markdown_paragraphs(text) == ["Ship on Fridays.", "Tabs in Makefiles."]
    assert {block.heading for block in found} == {"Team rules"}


def test_a_fence_left_open_in_one_memory_loses_none_of_the_next(memrepo: GitRepo, cli: Cli, home: Path,  # noqa: F811
                                                                tmp_path: Path) -> None:
    put(tmp_path / "codex", {"raw_memories.md": "- Run the suite like\n  ```\n  make test\n- Rebase before "
                                                "every push\n- Tabs in Makefiles\n"})
    done = cli(["import", "codex", "--from", str(tmp_path / "codex"), "--json"], cwd=memrepo.path)
    assert done.code == 0, done.err
    texts = [item["text"] for item in json.loads(done.out)["lessons"]]
    assert texts[1:] == ["Rebase before every push", "Tabs in Makefiles"]
