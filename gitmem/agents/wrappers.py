"""Commands that run another command: `timeout 600 codex exec -`, `env CODEX_HOME=/x codex`, `nice -n 5 claude`,
`stdbuf -oL …`. An agent's command is often one or several of them around the agent CLI. What the runner must know
of the CLI itself (which one it is, so that Codex's endpoint is read from Codex's own settings) is of the command
they finally run: `unwrapped` finds it, and the variables `env` sets for it, in one place (the box's reading of a
`#!/usr/bin/env …` line too).
"""
from __future__ import annotations

import os
import shlex
from collections.abc import Sequence

# A wrapper's options that take the next word as their value, and how many operands it reads before the command.
WRAPPERS: dict[str, tuple[frozenset[str], int]] = {
    "timeout": (frozenset({"-s", "--signal", "-k", "--kill-after"}), 1),          # timeout [opts] DURATION cmd
    "env": (frozenset({"-u", "--unset", "-C", "--chdir"}), 0),                     # env [opts] [NAME=VALUE…] cmd
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
    words, assigned = list(argv), {}
    while words and (name := os.path.basename(words[0])) in WRAPPERS:
        with_value, operands = WRAPPERS[name]
        rest, at = words[1:], 0
        while at < len(rest):
            word = rest[at]
            if word == "--":
                at += 1
                break
            if name == "env" and word in _SPLIT and at + 1 < len(rest):
                rest = [*rest[:at], *shlex.split(rest[at + 1]), *rest[at + 2:]]
            elif word in with_value:
                at += 2
            elif word.startswith("-"):          # a flag, or one with its value attached (`-n5`, `--signal=KILL`)
                at += 1
            elif name == "env" and "=" in word:
                key, _, value = word.partition("=")
                assigned[key] = value
                at += 1
            else:
                break
        words = rest[at + operands:]
    return words, assigned
