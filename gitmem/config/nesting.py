"""Nesting bounded in every structured text gitmem reads: YAML (gitmem.yaml, scripted replays, pre-commit's
config), JSON (hook payloads, MCP messages, agent CLI output, state files, agent-tool configs) and TOML.

Each parser recurses once per level (ruamel.yaml's composer, json's scanner, tomlkit), so a document nested a
thousand levels deep raised RecursionError from every command. A reader parses inside `parsing()`, which turns
that into `TooDeep`, and checks what it got with `within_depth()` (iteratively) before anything recurses over
it; `TooDeep` is a ValueError, so each reader reports it as the one-line error it already gives for bad input.

YAML's anchors and aliases make a document a graph: nine anchors of nine aliases each ("billion laughs") parse
into a few dozen shared lists that every walk over them, this one included, visits 9^9 times (`gitmem check`
hung on such a gitmem.yaml). So the walk also counts visits to a list or mapping it has already visited, and
past MAX_REVISITS the document is refused (`TooExpanded`, a TooDeep): the ordinary uses of anchors, a few
shared defaults, stay far below it, and JSON and TOML readers never share a node.

YAML is read through `yaml_loader()`, whose scanner refuses a flow collection (`[`, `{`) opened more than
MAX_DEPTH levels deep as it reads it: ruamel.yaml's scanner walks every open flow level for each token, so
an unbounded `[[[[…` cost the square of its depth before the parser recursed too deep (2.6 s for every
command to refuse a gitmem.yaml 1,000 levels deep). A document whose flow collections nest past MAX_DEPTH
nests past it whatever else it holds, so this refuses nothing `within_depth` would accept.
"""
from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any, TypeVar

MAX_DEPTH = 100          # levels of lists and mappings: far beyond any real config or payload
MAX_REVISITS = 10_000    # visits to lists and mappings already visited, through YAML aliases

T = TypeVar("T")


class TooDeep(ValueError):
    """A document nested deeper than MAX_DEPTH."""

    def __init__(self) -> None:
        super().__init__(f"nested deeper than {MAX_DEPTH} levels")


class TooExpanded(TooDeep):
    """A document whose aliases expand it past MAX_REVISITS shared lists and mappings."""

    def __init__(self) -> None:
        ValueError.__init__(self, f"its aliases expand to more than {MAX_REVISITS} copies of lists and mappings")


def depth(value: object) -> int:
    """How deeply lists and mappings nest in `value` (0 for a scalar), without recursing; TooExpanded when
    aliases make the walk revisit shared lists and mappings more than MAX_REVISITS times."""
    deepest, stack, visits, seen = 0, [(value, 1)], 0, set()
    while stack:
        item, level = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, (list, tuple)) else None
        if children is None:
            continue
        visits += 1
        seen.add(id(item))          # the document holds every item while it is walked: ids stay unique
        if visits - len(seen) > MAX_REVISITS:
            raise TooExpanded()
        deepest = max(deepest, level)
        if level > MAX_DEPTH:
            break
        stack += [(child, level + 1) for child in children]
    return deepest


def within_depth(value: T) -> T:
    """`value` itself, once it nests at most MAX_DEPTH levels; TooDeep otherwise."""
    if depth(value) > MAX_DEPTH:
        raise TooDeep()
    return value


class TooManyDigits(TooDeep):
    """A number longer than Python converts (`sys.get_int_max_str_digits()`, 4,300 digits by default)."""

    def __init__(self) -> None:
        ValueError.__init__(self, f"a number longer than {sys.get_int_max_str_digits()} digits")


@contextmanager
def parsing() -> Iterator[None]:
    """A parser's RecursionError (the document nests past what it can read) as TooDeep, and its ValueError for
    an integer past Python's digit limit (ruamel.yaml, json and tomlkit all call int() on what they read) as
    TooManyDigits."""
    try:
        yield
    except RecursionError:
        raise TooDeep() from None
    except ValueError as err:
        if "integer string conversion" in str(err) and not isinstance(err, TooDeep):
            raise TooManyDigits() from None
        raise


class LoneSurrogate(TooDeep):
    """A JSON string escape of half a UTF-16 pair (`\\ud800`): no Unicode text, so nothing can be written of it."""

    def __init__(self) -> None:
        ValueError.__init__(self, "a string holds a lone surrogate escape (half a UTF-16 pair), which is no text")


@cache
def _surrogate_escape() -> re.Pattern[str]:
    """Compiled on first use: the pre-commit path imports this module and reads no JSON."""
    return re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def yaml_loader(typ: str) -> Any:
    """A pure-Python ruamel.yaml loader of `typ` ("rt" round-trip, "safe" plain data) that raises TooDeep as
    soon as a flow collection opens past MAX_DEPTH levels; the one way gitmem builds a YAML reader."""
    from ruamel.yaml import YAML

    yaml = YAML(typ=typ, pure=True)
    yaml.Scanner = _bounded_scanner(typ == "rt")
    return yaml


@cache
def _bounded_scanner(round_trip: bool) -> type:
    from ruamel.yaml.scanner import RoundTripScanner, Scanner

    class BoundedScanner(RoundTripScanner if round_trip else Scanner):  # type: ignore[misc]
        """ruamel.yaml's scanner, refusing a flow collection opened past MAX_DEPTH levels."""

        def fetch_flow_collection_start(self, token: Any, to_push: str) -> None:
            if self.flow_level >= MAX_DEPTH:
                raise TooDeep()
            super().fetch_flow_collection_start(token, to_push)

    return BoundedScanner


def loads_json(text: str | bytes) -> Any:
    """`json.loads`, bounded: the one way gitmem reads JSON it did not write in this process. A document whose
    strings hold a lone surrogate is refused (json reads it; writing it anywhere as UTF-8 raises, and the MCP
    SDK's parser drops the whole message unanswered)."""
    import json  # only where JSON is read: the pre-commit path, which imports this module, reads none

    with parsing():
        doc = within_depth(json.loads(text))
    raw = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    if _surrogate_escape().search(raw):           # the rare text that may hold one: look for it properly
        try:
            json.dumps(doc, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise LoneSurrogate() from None
    return doc


def loads_toml(text: str) -> Any:
    """`tomllib.loads`, bounded: the one way gitmem reads TOML (agent CLIs' config files and `-c` settings).
    A `tomllib.TOMLDecodeError` is a ValueError, as TooDeep is."""
    import tomllib

    with parsing():
        return within_depth(tomllib.loads(text))
