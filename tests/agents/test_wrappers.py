"""Options given to the command behind wrappers (`gitmem.agents.wrappers.with_options`): the key stand-in's `-c`
for Codex must go before Codex's own `--`, never before a wrapper's, wherever an `env -S` string put Codex."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gitmem.agents import wrappers

SETTING = ["-c", 'openai_base_url="http://127.0.0.1:7/v1"']


def _given_last(command: list[str]) -> list[str]:
    """`command` as it should run: SETTING before its own `--`, or at its end."""
    end = command.index("--", 1) if "--" in command[1:] else len(command)
    return [*command[:end], *SETTING, *command[end:]]


@pytest.mark.parametrize("argv", [
    ["env", "-u", "Y", "--", "env", "-S", "codex exec -m o3", "--", "-"],     # the wrapper's `--` came first
    ["timeout", "--", "600", "env", "-S", "codex exec --full-auto", "--", "-"],
    ["env", "-S", "codex exec -- -"],                                          # Codex's `--` inside the string
    ["env", "-Scodex exec -- -"],
    ["env", "--split-string=A=1 codex exec -- -"],
    ["env", "-S", "-u X -- codex exec -m o3 -- -"],
    ["env", "-vS", "codex exec", "--", "-"],
    ["timeout", "600", "codex", "exec", "--", "-"],
    ["codex", "exec", "-"],
])
def test_the_options_reach_the_command_before_its_own_double_dash(argv: list[str]) -> None:
    given_to = wrappers.with_options(argv, SETTING)
    assert wrappers.unwrapped(given_to) == (_given_last(wrappers.unwrapped(argv)[0]), wrappers.unwrapped(argv)[1])
    assert given_to[0] == argv[0] and len(given_to) - len(argv) in (0, len(SETTING))


_WORDS = st.sampled_from(["env", "timeout", "600", "-u", "Y", "--", "-S", "-i", "X=1", "codex", "exec", "-", "-m",
                          "o3", "nice", "-n", "5", "codex exec -- -", "codex exec -m o3", "-u X -- codex exec"])


@settings(max_examples=400, deadline=None)
@given(st.lists(_WORDS, max_size=9))
def test_any_wrapped_command_gets_the_options_where_its_own_double_dash_is(argv: list[str]) -> None:
    command, assigned = wrappers.unwrapped(argv)
    if not command or command[0] != "codex" or sum(word.count("-S") for word in argv) > 1:
        return                                   # nothing to give them to; a string within a string goes last
    assert wrappers.unwrapped(wrappers.with_options(argv, SETTING)) == (_given_last(command), assigned)


@pytest.mark.parametrize("argv", [
    ["env", "-u", "Y", "--", "env", "-S", "codex exec -m o3", "--", "-"],
    ["env", "-S", "codex exec -- -"],
])
def test_the_key_stand_in_gives_codex_its_url_before_codexs_own_double_dash(argv: list[str]) -> None:
    """What the cycle runs: the stand-in's setting reaches Codex, however `env -S` wrapped it."""
    from gitmem.agents.key_stand_in import _with_codex_setting

    given_to = _with_codex_setting(argv, "openai_base_url", "http://127.0.0.1:7/v1")
    assert wrappers.unwrapped(given_to)[0] == _given_last(wrappers.unwrapped(argv)[0])


def test_the_options_go_into_an_env_s_string_before_its_double_dash_word_for_word() -> None:
    """One literal answer, not read back through the parser under test."""
    assert wrappers.with_options(["env", "-S", "codex exec -- -"], SETTING) == \
        ["env", "-S", "codex exec -c 'openai_base_url=\"http://127.0.0.1:7/v1\"' -- -"]
    assert wrappers.with_options(["env", "-u", "Y", "--", "codex", "exec", "--", "-"], SETTING) == \
        ["env", "-u", "Y", "--", "codex", "exec", *SETTING, "--", "-"]
