"""gitmem.yaml: defaults, validation with file:line and key paths, other file names end to end, workspaces."""
from __future__ import annotations

import json
import textwrap
from datetime import UTC
from pathlib import Path

import pytest

from gitmem.cli import main
from gitmem.config import Config, ConfigError, Files, load_config, parse_config
from gitmem.memory import log, now
from tests.support.gitcli import git
from tests.support.helpers import GitRepo, make_repo

ORIGINAL_NAMES = textwrap.dedent("""\
    # The original system's names.
    files:
      now: ESTADO.md
      decisions: DECISIONES.md
      log: BITACORA.md
      lessons: LECCIONES.md
      rules: CLAUDE.md
    timezone: Europe/Madrid
""")

ESTADO = """\
# NOW

## 2026-11-30 09:04 +01:00 · cycle 12
- Did: published the Spanish FAQ page.
- Human: D-0003 waits on you.
- Next: answer the two open emails.
"""

DECISIONES = """\
# DECISIONS

## Pending

### D-0003 · Translate the FAQ into Catalan?
- Asked: 2026-11-30 09:00 +01:00 (cycle 12)
- Recommendation: yes; 20% of visitors read Catalan.

## Resolved

### D-0002 · Use the new logo?
- Asked: 2026-11-28 10:00 +01:00 (cycle 8)
- Recommendation: yes.
- Answer: yes.
- Answered: 2026-11-28 19:30 +01:00 by Lucía Pérez <lucia@example.org>
"""

BITACORA = """\
# LOG

## 2026-11-29 10:02 +01:00 · cycle 11 · built
- Task: fix the broken links on the FAQ page.
- Result: built: 4 links fixed; link checker clean.

## 2026-11-30 09:04 +01:00 · cycle 12 · published
- Task: publish the Spanish FAQ page.
- Evidence: https://example.org/faq returns 200.
- Result: published.
"""

LECCIONES = """\
# LESSONS

## L-0001 · Published with a broken link
- Happened: 2026-11-20 (cycle 3) — the FAQ linked a deleted page.
- Why: no link check before publishing.
- Change: run the link checker first.
- Rule: Run the link checker before publishing.
- Confirmed: 2026-11-25 (cycle 7) — the checker caught two links.
- Confirmed: 2026-11-29 (cycle 11) — the checker caught four links.
- Status: promoted R-01
"""

CLAUDE = """\
# CLAUDE.md

You are Nube, the agent that keeps the FAQ of example.org current. Lucía Pérez is your human.

## Proven rules
- R-01 · Run the link checker before publishing. (from L-0001; cycles 7, 11)

## Retired
"""


LUCIA = ("Lucía Pérez", "lucia@example.org")     # the human of the original system's agent
ORIGINAL_FILES = ("gitmem.yaml", "ESTADO.md", "DECISIONES.md", "BITACORA.md", "LECCIONES.md", "CLAUDE.md")


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8", newline="\n")


def config_error(text: str) -> str:
    with pytest.raises(ConfigError) as caught:
        parse_config(text.encode("utf-8"))
    return str(caught.value)


# -- defaults -----------------------------------------------------------------------------------

def test_missing_config_means_defaults(tmp_path: Path) -> None:
    config = load_config(tmp_path)
    assert config == Config()
    assert config.warnings == ()
    assert config.memory_paths() == {"now": "NOW.md", "decisions": "DECISIONS.md", "log": "LOG.md",
                                     "lessons": "LESSONS.md", "rules": "RULES.md", "roadmap": "ROADMAP.md"}
    assert config.memory_paths(optional=False).keys() == {"now", "decisions", "log", "lessons", "rules"}
    assert (config.limits.now_block_lines, config.limits.rules_max_lines, config.limits.proven_rules_max,
            config.limits.grep_over_lines) == (10, 200, 30, 300)
    assert config.timezone == "UTC" and config.tzinfo() is UTC     # no zone database needed for the default


@pytest.mark.parametrize("text", ["", "# only a comment\n", "\ufefftimezone: UTC\n",
                                  "files:\n  # now: NOW.md\nlimits:\nagent:\n  shell:\n"])
def test_empty_or_comment_only_config_means_defaults(text: str) -> None:
    assert parse_config(text.encode("utf-8")) == Config()


def test_values_are_read(tmp_path: Path) -> None:
    (tmp_path / "gitmem.yaml").write_text(textwrap.dedent("""\
        memory_dir: memory
        files:
          rules: AGENTS.md
        agent:
          name: Orla
          email: orla@example.org
          shell:
            enabled: true
            allow: [pytest, ruff]
        timezone: America/New_York
        limits:
          now_block_lines: 12
        cycle:
          priorities: [answer people, measure]
        recall:
          min_score: 1
          rankers: {bm25: 0.7, semantic: 0.3}
    """), encoding="utf-8")
    config = load_config(tmp_path)
    assert config.warnings == ()
    assert config.path("rules") == "memory/AGENTS.md" and config.path("now") == "memory/NOW.md"
    assert (config.agent.name, config.agent.email) == ("Orla", "orla@example.org")
    assert config.agent.shell.enabled is True and config.agent.shell.allow == ("pytest", "ruff")
    assert config.limits.now_block_lines == 12 and config.limits.rules_max_lines == 200
    assert config.cycle.priorities == ("answer people", "measure")
    assert config.recall.min_score == 1.0 and isinstance(config.recall.min_score, float)
    assert config.recall.rankers == (("bm25", 0.7), ("semantic", 0.3))
    assert config.tzinfo().key == "America/New_York"


# -- unknown keys and errors --------------------------------------------------------------------

def test_unknown_keys_warn_with_did_you_mean() -> None:
    config = parse_config(b"timezon: UTC\nlimits:\n  now_block_line: 3\n  frobnicate: 1\nagent:\n  shell:\n"
                          b"    alow: [ls]\n")
    assert config.warnings == (
        "gitmem.yaml:1: GM929 unknown key 'timezon' ignored; did you mean 'timezone'?",
        "gitmem.yaml:3: GM929 unknown key 'limits.now_block_line' ignored; did you mean 'limits.now_block_lines'?",
        "gitmem.yaml:4: GM929 unknown key 'limits.frobnicate' ignored",
        "gitmem.yaml:7: GM929 unknown key 'agent.shell.alow' ignored; did you mean 'agent.shell.allow'?",
    )
    assert config.limits == Config().limits


def test_cli_prints_config_warnings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    make_repo(tmp_path, template=False, author=LUCIA)
    write(tmp_path, {"gitmem.yaml": "memroy_dir: .\n"})
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--worktree"]) == 2           # no memory here: run `gitmem init`
    err = capsys.readouterr().err
    assert "warning: gitmem.yaml:1: GM929 unknown key 'memroy_dir' ignored; did you mean 'memory_dir'?" in err


@pytest.mark.parametrize(("text", "message"), [
    ("limits:\n  now_block_lines: ten\n",
     "gitmem.yaml:2: GM927 limits.now_block_lines: expected a whole number, got 'ten' (text)"),
    ("limits:\n  now_block_lines: true\n",
     "gitmem.yaml:2: GM927 limits.now_block_lines: expected a whole number, got true (a yes/no value)"),
    ("limits:\n  rules_max_lines: -5\n", "gitmem.yaml:2: GM928 limits.rules_max_lines: must not be negative, got -5"),
    ("agent:\n  name: Orla\n  email: 42\n", "gitmem.yaml:3: GM927 agent.email: expected text, got 42 (a whole number)"),
    ("agent:\n  shell:\n    enabled: yes please\n",
     "gitmem.yaml:3: GM927 agent.shell.enabled: expected true or false, got 'yes please' (text)"),
    ("limits: 3\n", "gitmem.yaml:1: GM927 limits: expected a mapping, got 3 (a whole number)"),
    ("files: [NOW.md]\n", "gitmem.yaml:1: GM927 files: expected a mapping, got a list"),
    # A whole document of the wrong kind is named by its first line, as every diagnostic is (`path:line:`):
    ("- a\n- b\n", "gitmem.yaml:1: GM927 top level: expected a mapping, got a list"),
    ("# settings\n---\n- a\n", "gitmem.yaml:3: GM927 top level: expected a mapping, got a list"),
    ("\n# settings\n\njust text\n", "gitmem.yaml:4: GM927 top level: expected a mapping, got 'just text' (text)"),
    ("42\n", "gitmem.yaml:1: GM927 top level: expected a mapping, got 42 (a whole number)"),
    # A bound as written in YAML, not `:g`'s 1e+07; a decimal with no fraction is not called one with a fraction:
    ("cycle:\n  max_context_tokens: 99999999999\n",
     "gitmem.yaml:2: GM928 cycle.max_context_tokens: must be at most 10000000, got 99999999999"),
    ("cycle:\n  max_context_tokens: 6.5e4\n",
     "gitmem.yaml:2: GM927 cycle.max_context_tokens: expected a whole number, got 65000.0 (a decimal number)"),
    ("cycle:\n  priorities: [1, 2]\n", "gitmem.yaml:2: GM927 cycle.priorities: expected a list of strings"),
    ("recall:\n  rankers: [bm25]\n",
     "gitmem.yaml:2: GM927 recall.rankers: expected a mapping of ranker name to weight"),
    ("recall:\n  min_score: high\n", "gitmem.yaml:2: GM927 recall.min_score: expected a number, got 'high' (text)"),
    ("timezone: UTC\nfiles:\n  now: notes/NOW.md\n",
     "gitmem.yaml:3: GM928 files.now: 'notes/NOW.md' must be a plain file name"),
    ("files:\n  log: .LOG.md\n", "gitmem.yaml:2: GM928 files.log: '.LOG.md' must be a plain file name"),
    ("files:\n  log:\n", "gitmem.yaml:2: GM927 files.log: expected text, got nothing (the key is empty)"),
    # YAML's kinds, not Python's reprs (`CommentedMap({'a': 1})`, `datetime.date(2020, 1, 1)`):
    ("timezone:\n  a: 1\n", "gitmem.yaml:1: GM927 timezone: expected text, got a mapping"),
    ("timezone: [UTC]\n", "gitmem.yaml:1: GM927 timezone: expected text, got a list"),
    ("close:\n  confirmations: 2020-01-01\n",
     "gitmem.yaml:2: GM927 close.confirmations: expected a whole number, got a date (2020-01-01)"),
    ("memory_dir: ../elsewhere\n", "gitmem.yaml:1: GM928 memory_dir: '../elsewhere' must stay inside the repository"),
    ("memory_dir: /abs\n", "gitmem.yaml:1: GM928 memory_dir: '/abs' must stay inside the repository"),
    ("agent:\n  backend: gpt\n",
     "gitmem.yaml:2: GM928 agent.backend: 'gpt' is not one of anthropic, command, scripted"),
    ("limits:\n  now_block_lines: 0\n",
     "gitmem.yaml:2: GM928 limits.now_block_lines: must be at least 3, got 0: a NOW block's body holds its Did, Human "
     "and Next lines"),
    ("cycle:\n  log_entries: 0\n", "gitmem.yaml:2: GM928 cycle.log_entries: must be at least 1, got 0"),
    # Zone names are case-sensitive file names: the one meant is named, as a mistyped key's is.
    ("timezone: europe/madrid\n", "gitmem.yaml:1: GM928 timezone: 'europe/madrid' is not an IANA time zone name (for "
                                 "example UTC or Europe/Madrid); did you mean 'Europe/Madrid'?"),
    ("timezone: utc\n", "gitmem.yaml:1: GM928 timezone: 'utc' is not an IANA time zone name (for example UTC or "
                        "Europe/Madrid); did you mean 'UTC'?"),
    ("timezone: Europe/Madird\n", "gitmem.yaml:1: GM928 timezone: 'Europe/Madird' is not an IANA time zone name (for "
                                  "example UTC or Europe/Madrid); did you mean 'Europe/Madrid'?"),
])
def test_bad_values_name_file_line_and_key(text: str, message: str) -> None:
    assert config_error(text).startswith(message)


@pytest.mark.parametrize(("text", "line"), [
    ("timezone: UTC\nlimits: [\n", 3), ("agent:\n  name: a\n   email: b\n", 3), ("a: b\na: c\n", 2),
    ("files:\n\tnow: X.md\n", 2),
])
def test_invalid_yaml_gives_file_and_line(text: str, line: int) -> None:
    assert config_error(text).startswith(f"gitmem.yaml:{line}: GM930 invalid YAML: ")


def test_invalid_utf8_config_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "gitmem.yaml").write_bytes(b"timezone: \xff\n")
    with pytest.raises(ConfigError, match=r"^gitmem.yaml:1: GM930 not valid UTF-8"):
        load_config(tmp_path)


def test_unreadable_config_is_a_config_error(tmp_path: Path) -> None:
    (tmp_path / "gitmem.yaml").mkdir()
    with pytest.raises(ConfigError, match=r"^gitmem.yaml:1: GM930 gitmem.yaml is a directory; .*regular file"):
        load_config(tmp_path)


@pytest.mark.parametrize("zone", ["Mars/Olympus_Mons", "CET+1", "../../etc/passwd", "utc+2"])
def test_bad_timezone(zone: str) -> None:
    message = config_error(f"agent:\n  name: a\ntimezone: {zone}\n")
    assert message.startswith(f"gitmem.yaml:3: GM928 timezone: '{zone}' is not an IANA time zone name")


def test_config_error_exits_2_with_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    make_repo(tmp_path, template=False, author=LUCIA)
    write(tmp_path, {"gitmem.yaml": "limits:\n  now_block_lines: ten\n"})
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--worktree"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == ("gitmem: gitmem.yaml:2: GM927 limits.now_block_lines: expected a whole number, got "
                            "'ten' (text)\n")


# -- the original system's file names, end to end -----------------------------------------------

def original_repo(root: Path) -> GitRepo:
    repo = make_repo(root, template=False, author=LUCIA)
    write(root, {"gitmem.yaml": ORIGINAL_NAMES, "ESTADO.md": ESTADO, "DECISIONES.md": DECISIONES,
                 "BITACORA.md": BITACORA, "LECCIONES.md": LECCIONES, "CLAUDE.md": CLAUDE})
    return repo


def test_original_names_map_every_role(tmp_path: Path) -> None:
    write(tmp_path, {"gitmem.yaml": ORIGINAL_NAMES})
    config = load_config(tmp_path)
    assert config.warnings == ()
    assert config.files == Files("ESTADO.md", "DECISIONES.md", "BITACORA.md", "LECCIONES.md", "CLAUDE.md")
    assert config.memory_paths(optional=False) == {"now": "ESTADO.md", "decisions": "DECISIONES.md",
                                                   "log": "BITACORA.md", "lessons": "LECCIONES.md",
                                                   "rules": "CLAUDE.md"}


def test_original_names_check_and_write_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    repo = original_repo(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--worktree"]) == 0
    assert capsys.readouterr() == ("", "")
    repo.stage(*ORIGINAL_FILES)
    repo.commit("memory in the original names", author=LUCIA)
    monkeypatch.delenv("GITMEM_CYCLE", raising=False)

    assert main(["log", "add", "--task", "answer the two open emails", "--outcome", "built",
                 "--result", "both answered; FAQ entry added"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("BITACORA.md: appended: ## ") and out.endswith(" · cycle 13 · built\n")
    assert not (tmp_path / "LOG.md").exists()
    grown = (tmp_path / "BITACORA.md").read_text(encoding="utf-8")
    assert grown.startswith(BITACORA)
    entry = log.parse(grown).entries[-1]
    assert (entry.cycle, entry.outcome, entry.get("Task")) == (13, "built", "answer the two open emails")
    assert entry.when.label in ("+01:00", "+02:00")          # Europe/Madrid, from gitmem.yaml

    assert main(["now", "add", "--did", "answered the emails", "--human", "nothing", "--next", "Catalan FAQ"]) == 0
    assert capsys.readouterr().out.startswith("ESTADO.md: added: ## ")
    assert not (tmp_path / "NOW.md").exists()
    assert now.parse((tmp_path / "ESTADO.md").read_text(encoding="utf-8")).top.cycle == 13  # type: ignore[union-attr]

    assert main(["check", "--worktree"]) == 0
    assert capsys.readouterr() == ("", "")


def test_original_names_report_their_own_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    repo = original_repo(tmp_path)
    repo.stage(*ORIGINAL_FILES)
    repo.commit("memory", author=LUCIA)
    write(tmp_path, {"BITACORA.md": BITACORA.replace("· cycle 11 · built", "· cycle 10 · built")})
    (tmp_path / "DECISIONES.md").unlink()
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--worktree"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert [line.split(" ")[:2] for line in out] == [["BITACORA.md:3:", "GM301"], ["DECISIONES.md:1:", "GM904"]]
    assert "memory file DECISIONES.md is missing" in out[1]


# -- workspaces ---------------------------------------------------------------------------------

WORKSPACES = textwrap.dedent("""\
    workspaces:
      writer:
        memory_dir: agents/writer
      reviewer:
        memory_dir: agents/reviewer
        files:
          rules: CLAUDE.md
""")


def test_workspaces_parse_and_select(tmp_path: Path) -> None:
    write(tmp_path, {"gitmem.yaml": WORKSPACES})
    config = load_config(tmp_path)
    assert [name for name, _ in config.workspaces] == ["writer", "reviewer"]
    assert config.path("now") == "NOW.md" and config.workspace == ""
    writer = load_config(tmp_path, workspace="writer")
    assert writer.workspace == "writer"
    assert writer.path("now") == "agents/writer/NOW.md" and writer.path("rules") == "agents/writer/RULES.md"
    reviewer = config.with_workspace("reviewer")
    assert reviewer.path("rules") == "agents/reviewer/CLAUDE.md"
    assert reviewer.path("log") == "agents/reviewer/LOG.md"
    with pytest.raises(ConfigError, match="unknown workspace 'editor' \\(writer, reviewer\\)"):
        load_config(tmp_path, workspace="editor")
    with pytest.raises(ConfigError, match="none are configured"):
        Config().with_workspace("writer")


def test_a_mistyped_workspace_gets_a_did_you_mean_as_a_mistyped_key_does(tmp_path: Path, cli, git_env) -> None:  # type: ignore[no-untyped-def]
    """`-w writr` listed the names but did not say which one was meant, as gitmem.yaml's keys do."""
    git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "gitmem.yaml").write_text("workspaces:\n  writer:\n    memory_dir: agents/writer\n"
                                          "  reviewer:\n    memory_dir: agents/reviewer\n")
    done = cli(["status", "-w", "writr"], cwd=tmp_path)
    assert done.code == 2
    assert done.err == ("gitmem: gitmem.yaml:1: GM929 unknown workspace 'writr' (writer, reviewer); "
                        "did you mean 'writer'?\n")


@pytest.mark.parametrize(("text", "message"), [
    ("workspaces: [a, b]\n", "gitmem.yaml:1: GM927 workspaces: expected a mapping of name to settings"),
    ("workspaces:\n  a: 3\n", "gitmem.yaml:2: GM927 workspaces.a: expected a mapping, got 3 (a whole number)"),
    ("workspaces:\n  a:\n    memory_dir: ../b\n",
     "gitmem.yaml:3: GM928 workspaces.a.memory_dir: '../b' must stay inside"),
    ("workspaces:\n  a:\n    files:\n      log: x/LOG.md\n",
     "gitmem.yaml:4: GM928 workspaces.a.files.log: 'x/LOG.md' must be"),
    ("workspaces:\n  a:\n    memory_dir: 7\n",
     "gitmem.yaml:3: GM927 workspaces.a.memory_dir: expected text, got 7 (a whole number)"),
])
def test_bad_workspaces(text: str, message: str) -> None:
    assert config_error(text).startswith(message)


def test_workspace_unknown_key_warns() -> None:
    config = parse_config(b"workspaces:\n  a:\n    memory_dri: x\n")
    assert config.warnings == ("gitmem.yaml:3: GM929 unknown key 'workspaces.a.memory_dri' ignored; "
                               "did you mean 'workspaces.a.memory_dir'?",)


def test_workspace_check_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    make_repo(tmp_path, template=False, author=LUCIA)
    write(tmp_path, {"gitmem.yaml": WORKSPACES,
                     "agents/reviewer/NOW.md": ESTADO, "agents/reviewer/DECISIONS.md": DECISIONES,
                     "agents/reviewer/LOG.md": BITACORA, "agents/reviewer/LESSONS.md": LECCIONES,
                     "agents/reviewer/CLAUDE.md": CLAUDE})
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--worktree", "--workspace", "reviewer"]) == 0
    assert capsys.readouterr() == ("", "")
    assert main(["check", "--worktree", "--workspace", "writer"]) == 1
    out = capsys.readouterr().out
    assert out.count("GM904") == 5 and "agents/writer/LOG.md:1: GM904" in out


def test_the_reader_sees_each_fields_type_as_its_annotation_declares_it() -> None:
    """`field_type` reads annotations without evaluating them (the pre-commit path's start-up): it must agree
    with typing's evaluation for every field the reader fills, and refuse an annotation it cannot read."""
    import dataclasses
    import typing

    import gitmem.config as config_module
    from gitmem.config import Config, field_type

    sections: list[type] = [Config]
    for cls in sections:
        hints = typing.get_type_hints(cls)
        for spec in dataclasses.fields(cls):
            if spec.name in ("workspace", "warnings", "default_files"):
                continue
            hint = hints[spec.name]
            if isinstance(hint, type) and dataclasses.is_dataclass(hint):
                assert field_type(spec) is hint
                sections.append(hint)
            else:
                assert field_type(spec) == (typing.get_origin(hint) or hint).__name__, spec.name
    assert {cls.__name__ for cls in sections[1:]} == set(config_module._SECTIONS)
    odd = dataclasses.field(default=None)
    odd.name, odd.type = "odd", "int | None"
    with pytest.raises(TypeError, match="not a type the config reader knows"):
        field_type(odd)


@pytest.mark.parametrize(("text", "message"), [
    ("limits:\n  now_block_lines: false\n",
     "limits.now_block_lines: expected a whole number, got false (a yes/no value)"),
    ("limits:\n  now_block_lines:\n",
     "limits.now_block_lines: expected a whole number, got nothing (the key is empty)"),
    ("limits:\n  now_block_lines: 2.5\n",
     "limits.now_block_lines: expected a whole number, got 2.5 (a number with a fraction)"),
    ("agent:\n  model: 7\n", "agent.model: expected text, got 7 (a whole number)"),
    ("recall:\n  min_score: true\n", "recall.min_score: expected a number, got true (a yes/no value)"),
])
def test_a_value_of_the_wrong_type_is_named_in_words_not_pythons(tmp_path: Path, text: str, message: str) -> None:
    """`got True`, `got None` and `expected int` are Python's words; a person wrote YAML: say what the key wants
    and what it holds as they would."""
    (tmp_path / "gitmem.yaml").write_text(text)
    with pytest.raises(ConfigError) as raised:
        load_config(tmp_path)
    assert str(raised.value) == "gitmem.yaml:2: GM927 " + message


def test_a_now_block_shorter_than_its_three_fields_is_refused(tmp_path: Path) -> None:
    """`now_block_lines: 2` was accepted: then every block `gitmem now add` writes (Did, Human, Next) is GM101, and
    no cycle can write NOW at all. Three is the least a block can hold; history that set less still reads."""
    (tmp_path / "gitmem.yaml").write_text("limits:\n  now_block_lines: 2\n")
    with pytest.raises(ConfigError, match="now_block_lines: must be at least 3, got 2: a NOW block's body holds"):
        load_config(tmp_path)
    (tmp_path / "gitmem.yaml").write_text("limits:\n  now_block_lines: 3\n")
    assert load_config(tmp_path).limits.now_block_lines == 3


def test_a_fleet_file_value_of_the_wrong_type_is_named_in_words(tmp_path: Path) -> None:
    """fleet.yaml said `expected text, got int` (and `got NoneType`)."""
    from gitmem.fleet.fleetfile import parse_fleet

    for value, shown in (("42", "42 (a whole number)"), ("", "nothing (the key is empty)")):
        with pytest.raises(ConfigError) as raised:
            parse_fleet(f"agents:\n  - name: {value}\n    repo: ./a\n".encode(), path=tmp_path / "fleet.yaml")
        assert str(raised.value).endswith(f"name: expected text, got {shown}"), str(raised.value)


@pytest.mark.parametrize(("yaml", "line", "meant"), [
    ("recall:\n  rankers:\n    bm2: 1.0\n", 3, "; did you mean 'bm25'?"),
    ("recall:\n  rankers:\n    bm25: 1.0\n    recency: 0.5\n", 4, ""),
])
def test_an_unknown_ranker_is_refused_naming_its_line_and_code(memrepo, cli, yaml: str, line: int,
                                                              meant: str) -> None:
    """`recall.rankers` took any name, silently: a typo (`bm2`) loaded fine and only `recall` failed, later. Now the
    config is refused as it loads, `gitmem.yaml:LINE: GM926 …`, for every command (exit 2), JSON naming the code."""
    memrepo.write("gitmem.yaml", yaml)
    name = yaml.strip().split("\n")[-1].split(":")[0].strip()
    expected = (f"gitmem.yaml:{line}: GM926 recall.rankers: {name!r} is no ranker of gitmem's (known: bm25, "
                f"semantic){meant} (hint: name a known ranker, or remove the line)")
    for argv in (["status"], ["check", "--worktree"]):
        result = cli(argv, cwd=memrepo.path)
        assert (result.code, result.err) == (2, f"gitmem: {expected}\n"), result.err
    answer = json.loads(cli(["status", "--json"], cwd=memrepo.path).out)
    assert (answer["code"], answer["error"]) == ("GM926", expected)
