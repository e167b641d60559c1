"""Commands that run another command: `timeout 600 codex exec -`, `env CODEX_HOME=/x codex`, `nice -n 5 claude`,
`stdbuf -oL …`. An agent's command is often one or several of them around the agent CLI. What the runner must know
of the CLI itself (which one it is, so that Codex's endpoint is read from Codex's own settings) is of the command
they finally run: `unwrapped` finds it, and the variables `env` sets for it, in one place (the box's reading of a
`#!/usr/bin/env …` line too). `with_options` gives that command options after its own (the key stand-in's `-c` for
Codex), found by the same reading, so never at a wrapper's `--`.
"""
from __future__ import annotations

import os
import shlex
from collections.abc import Sequence

# A wrapper's options that take a value (the next word, or attached: `-k5`, `--signal=KILL`), and how many operands
# it reads before the command.
WRAPPERS: dict[str, tuple[frozenset[str], int]] = {
    "timeout": (frozenset({"-s", "--signal", "-k", "--kill-after"}), 1),          # timeout [opts] DURATION cmd
    "env": (frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}), 0),  # env [opts] [N=V…] cmd
    "nice": (frozenset({"-n", "--adjustment"}), 0),
    "stdbuf": (frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}), 0),
    "ionice": (frozenset({"-c", "--class", "-n", "--classdata"}), 0),
    "taskset": (frozenset(), 1),                                                   # taskset [-c] MASK cmd
    "nohup": (frozenset(), 0),
    "setsid": (frozenset(), 0),
    "time": (frozenset({"-f", "--format", "-o", "--output"}), 0),
}
_SPLIT = ("-S", "--split-string")       # env's: one word holding several (a `#!` line's only way to pass them)


def unwrapped(argv: Sequence[str]) -> tuple[list[str], dict[str, str]]:
    """The command the wrappers at the start of `argv` run (`argv` itself when it starts with none; empty when a
    wrapper runs nothing), and the variables `env` sets for it (`env A=1 codex` runs codex with A=1)."""
    found, assigned, _ = _located(argv)
    return [word for word, _ in found], assigned


def with_options(argv: Sequence[str], options: Sequence[str]) -> list[str]:
    """`argv` with `options` given last to the command its wrappers run: before that command's own `--` (never a
    wrapper's: `env -u X -- env -S 'codex exec' -- -`), else at the end. An `--` of the command's that stands in
    an `env -S` string is found in that string, and the options go into it there."""
    found, _, strings = _located(argv)
    end = next((at for at in range(1, len(found)) if found[at][0] == "--"), None)
    if end is None:
        return [*argv, *options]
    source = found[end][1]
    from_source = [at for at, (_, index) in enumerate(found) if index == source]
    if from_source == [end] and argv[source] == "--":     # a word of its own in argv
        return [*argv[:source], *options, *argv[source:]]
    head = strings.get(source)
    if head is None:
        return [*argv, *options]
    words = _split(argv[source][len(head):])
    before = len(words) - len(from_source) + from_source.index(end)     # the wrapper's own words lead the string
    if words[before:before + 1] != ["--"]:          # a string within a string: not rewritten, the options go last
        return [*argv, *options]
    string = shlex.join([*words[:before], *options, *words[before:]])
    return [*argv[:source], f"{head}{string}", *argv[source + 1:]]


def _located(argv: Sequence[str]) -> tuple[list[tuple[str, int]], dict[str, str], dict[int, str]]:
    """`unwrapped`'s command, each word with the index in `argv` of the word it was read from (the words of an
    `env -S` string share that string's index); the variables `env` sets; and for each argv word that held an
    `env -S` string what comes before the string in it (`-S` attached, `--split-string=`; "" for the next word)."""
    words, assigned = [(word, index) for index, word in enumerate(argv)], {}
    strings: dict[int, str] = {}
    while words and (name := os.path.basename(words[0][0])) in WRAPPERS:
        with_value, operands = WRAPPERS[name]
        rest, at = words[1:], 0
        while at < len(rest):
            word = rest[at][0]
            if word == "--":
                at += 1
                break
            if name == "env" and "=" in word and not word.startswith("-"):
                key, _, value = word.partition("=")
                assigned[key] = value
                at += 1
                continue
            if not word.startswith("-") or word == "-":     # env's lone `-` is its -i
                if word != "-":
                    break
                at += 1
                continue
            option, given = _option(word, with_value)
            at += 1
            if option is None:
                continue
            source, head = rest[at - 1][1], word[:len(word) - len(given)] if given is not None else ""
            if given is None and at < len(rest):
                (given, source), at = rest[at], at + 1
            if name == "env" and option in _SPLIT and given is not None:
                strings.setdefault(source, head)      # a string within it says nothing of the word
                rest = [*rest[:at], *((split, source) for split in _split(given)), *rest[at:]]
        words = rest[at + operands:]
    return words, assigned, strings


def _option(word: str, with_value: frozenset[str]) -> tuple[str | None, str | None]:
    """Of an option word, the option that takes a value and the value attached to it (None when the value is the
    next word); (None, None) for flags. As getopt reads them: short ones cluster (`-iu X`, `-vk5`: the first that
    takes a value takes the rest of the word), and a long one may be cut to any unique prefix (`--sig KILL`)."""
    if word.startswith("--"):
        given, equals, attached = word.partition("=")
        named = [given] if given in with_value else \
            [option for option in with_value if option.startswith("--") and option.startswith(given)]
        if len(named) != 1:
            return None, None
        return named[0], attached if equals else None
    for place, letter in enumerate(word[1:], start=2):
        if f"-{letter}" in with_value:
            return f"-{letter}", word[place:] or None
    return None, None


def _split(text: str) -> list[str]:
    """`env -S`'s words. A string shlex cannot split (an unclosed quote), env itself refuses; its words split at
    blanks still say which command was meant, rather than the reading stopping with an error."""
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()
