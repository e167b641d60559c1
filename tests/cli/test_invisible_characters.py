"""What a reader cannot see is shown as its escape, as a terminal control is (`gitmem.memory.display.printable`): a
zero-width space, a word joiner, a BOM inside text and the tag characters made `D-0001 · Ship it?` and a title
holding them look alike in every view, and hid text from the human that a model reads. A zero-width joiner inside
an emoji sequence or a Persian word is how those are written, and is shown as it is."""
from __future__ import annotations

import json

import pytest

from gitmem.memory.display import printable

HIDDEN = {"zero-width space": "\u200b", "word joiner": "\u2060", "byte order mark": "\ufeff",
          "zero-width joiner after ASCII": "\u200d", "zero-width non-joiner after ASCII": "\u200c",
          "tag letter": "\U000e0041"}


@pytest.mark.parametrize("name", list(HIDDEN))
def test_every_view_shows_a_hidden_character_as_its_escape(memrepo, cli, monkeypatch, name: str) -> None:
    hidden = HIDDEN[name]
    escape = f"\\u{ord(hidden):04x}" if ord(hidden) <= 0xFFFF else f"\\U{ord(hidden):08x}"
    monkeypatch.setenv("GITMEM_CYCLE", "1")
    asked = cli(["decision", "ask", "--title", f"Ship{hidden} it?", "--recommendation", "yes"], cwd=memrepo.path)
    assert asked.code == 0, asked.err
    for result in (asked, cli(["pending"], cwd=memrepo.path), cli(["status"], cwd=memrepo.path)):
        assert hidden not in result.out and f"Ship{escape} it?" in result.out, result.out
    for argv in (["pending", "--json"], ["status", "--json"]):
        shown = cli(argv, cwd=memrepo.path).out
        assert hidden not in shown and f"Ship{escape} it?" in json.dumps(json.loads(shown), ensure_ascii=False)\
            .replace("\\\\", "\\"), shown


def test_a_joiner_inside_an_emoji_sequence_or_a_word_that_needs_it_is_shown_as_it_is() -> None:
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"
    persian = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"
    assert printable(f"{family} and {persian}") == f"{family} and {persian}"
    assert printable("D-0001\u200d") == "D-0001\\u200d"
