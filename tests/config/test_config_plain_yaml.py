"""The plain-YAML reader of gitmem.yaml agrees with ruamel.yaml on everything it accepts, and hands the rest on."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from gitmem.config import _full_config, parse_config
from gitmem.config.plain_yaml import load_plain_yaml
from gitmem.scaffold.init import template_dir

ROOT = Path(__file__).resolve().parents[2]


def ruamel(text: str) -> Any:
    def plain(node: Any) -> Any:
        if isinstance(node, dict):
            return {str(k): plain(v) for k, v in node.items()}
        if isinstance(node, list):
            return [plain(v) for v in node]
        return node

    return plain(YAML(typ="rt").load(text))


def test_the_template_config_is_plain_and_reads_the_same() -> None:
    text = (template_dir() / "gitmem.yaml").read_text(encoding="utf-8")
    assert load_plain_yaml(text) is not None and load_plain_yaml(text) == ruamel(text)
    assert parse_config(text.encode()) == _full_config(text, "gitmem.yaml")


@pytest.mark.parametrize("value", ["yes", "No", "on", "1_000", "0x1f", "1e3", ".5", "+1", "010", "2026-11-30",
                                   "'quoted'", '"quoted"', "[a, b]", "{a: 1}", "&anchor x", "*alias", "!tag x",
                                   "| block", "> folded", ".inf", ".NaN", "- item", "a: b", "@x", "`x`", "%x"])
def test_anything_another_yaml_type_could_claim_goes_to_ruamel(value: str) -> None:
    assert load_plain_yaml(f"key: {value}\n") is None


@pytest.mark.parametrize("text", ["a: b\n  c: d\n", "a:\n    b: 1\n  c: 2\n", "a: 1\na: 2\n",
                                  "a:\n- b: 1\n", "a:\n\tb: 1\n", "---\na: 1\n", "just text\n", "a: 1\n b: 2\n"])
def test_other_shapes_go_to_ruamel(text: str) -> None:
    assert load_plain_yaml(text) is None


def test_a_config_with_a_warning_or_an_error_is_read_by_ruamel_for_its_line_numbers() -> None:
    warned = parse_config(b"# a comment\nlimits:\n  now_block_line: 12\n")
    assert warned.warnings == ("gitmem.yaml:3: GM929 unknown key 'limits.now_block_line' ignored; did you mean "
                               "'limits.now_block_lines'?",)


KEYS = st.from_regex(r"[a-z_][a-z0-9_]{0,7}", fullmatch=True)
WORDS = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ._-/@:#+!?,", min_size=0,
                max_size=12)
SCALARS = st.one_of(WORDS, st.integers(-10**6, 10**6).map(str), st.floats(0, 1000, allow_nan=False).map(str),
                    st.sampled_from(["true", "False", "null", "~", "yes", "no", ".", "-", "UTC", "Europe/Madrid",
                                     "claude -p", "a #b", "a # comment", "http://x", "x:", "0", "00", "-0"]))


def documents(depth: int = 2) -> st.SearchStrategy[str]:
    # Each kind of entry draws only what it writes: drawing a nested mapping for every scalar entry too made
    # the examples' generation, not the readers, the test's whole cost.
    def mapping(indent: int, level: int) -> st.SearchStrategy[str]:
        pad = " " * indent
        scalar_entry = st.builds(lambda key, scalar: f"{pad}{key}: {scalar}\n", KEYS, SCALARS)
        if level == 0:
            entries = scalar_entry
        else:
            list_entry = st.builds(lambda key, items: f"{pad}{key}:\n" + "".join(f"{pad}  - {i}\n" for i in items),
                                   KEYS, st.lists(SCALARS, min_size=1, max_size=3))
            map_entry = st.builds(lambda key, inner: f"{pad}{key}:\n{inner}", KEYS, mapping(indent + 2, level - 1))
            entries = st.one_of(scalar_entry, list_entry, map_entry)
        return st.lists(entries, min_size=1, max_size=4).map("".join)
    return mapping(0, depth)


@settings(max_examples=300, deadline=None)
@given(documents())
def test_whatever_the_reader_accepts_reads_as_ruamel_reads_it(text: str) -> None:
    mine = load_plain_yaml(text)
    if mine is None:
        return
    try:
        theirs = ruamel(text)
    except Exception as err:         # ruamel refuses what the reader accepted: the reader is wrong
        raise AssertionError(f"ruamel refused {text!r}: {err}") from None
    assert mine == theirs, text
