"""docs/format.md is a test fixture: its full examples must pass `gitmem check` and round-trip exactly,
and its tables of config keys and GM codes must match the code.

After adding a GM code, regenerate the codes table with `python tests/docs/test_format_docs.py`.
"""
from __future__ import annotations

import re
import sys
from dataclasses import fields, is_dataclass
from pathlib import Path
from typing import Any

import pygit2
import pytest

from gitmem.cli import main
from gitmem.codes import CODES as RULES
from gitmem.config import Config, load_config
from gitmem.memory import decisions, lessons, log, now, roadmap, rules

DOC = Path(__file__).resolve().parents[2] / "docs" / "format.md"
EXAMPLE_RE = re.compile(r"<!-- example: (\S+) -->\n```(\w+)\n(.*?)\n```\n", re.S)
CODES_BEGIN, CODES_END = "<!-- codes:begin -->\n", "<!-- codes:end -->"
CONFIG_BEGIN, CONFIG_END = "<!-- config:begin -->\n", "<!-- config:end -->"
CONFIG_ROW_RE = re.compile(r"^\| `([^`]+)` \| `([^`]*)` \| (.+) \|$")

MODELS = {"NOW.md": now, "DECISIONS.md": decisions, "LOG.md": log, "LESSONS.md": lessons, "RULES.md": rules}
# Keys whose YAML form is a mapping although the dataclass stores pairs.
MAPPING_KEYS = {"workspaces", "recall.rankers"}


def doc_text() -> str:
    return DOC.read_text(encoding="utf-8")


def examples(text: str) -> dict[str, str]:
    """Marked examples by file name, each with the file's final newline restored."""
    found: dict[str, str] = {}
    for name, _lang, body in EXAMPLE_RE.findall(text):
        assert name not in found, f"two examples are marked {name}"
        found[name] = body + "\n"
    return found


def codes_table() -> str:
    """The Markdown table of every GM code, generated from the registry."""
    rows = ["| Code | Slug | Severity | Meaning |", "|---|---|---|---|"]
    for item in RULES:
        rows.append(f"| {item.code} | `{item.slug}` | {item.severity} | {item.summary.replace('|', chr(92) + '|')} |")
    return "\n".join(rows) + "\n"


def between(text: str, begin: str, end: str) -> str:
    start = text.index(begin) + len(begin)
    return text[start:text.index(end, start)]


def show(key: str, value: Any) -> str:
    """A default as the doc writes it, in YAML-ish form."""
    if key in MAPPING_KEYS:
        return "{" + ", ".join(f"{k}: {v}" for k, v in value) + "}"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return "[" + ", ".join(value) + "]"
    if isinstance(value, str):
        return value or '""'
    return repr(value)


def config_defaults(obj: Any = None, prefix: str = "") -> dict[str, str]:
    """Every config key path with its default, flattened from the Config dataclasses."""
    obj = Config() if obj is None else obj
    found: dict[str, str] = {}
    for item in fields(obj):
        if item.name in ("workspace", "warnings", "default_files"):      # runtime state, not keys of the file
            continue
        value = getattr(obj, item.name)
        key = prefix + item.name
        if is_dataclass(value):
            found.update(config_defaults(value, key + "."))
        else:
            found[key] = show(key, value)
    return found


def init_repo(path: Path) -> pygit2.Repository:
    return pygit2.init_repository(str(path), initial_head="main")


def write_examples(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8", newline="\n")


# -- the examples -------------------------------------------------------------------------------

def test_doc_has_every_example() -> None:
    assert set(examples(doc_text())) == {*MODELS, "ROADMAP.md", "gitmem.yaml"}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_example_round_trips_and_parses_clean(name: str) -> None:
    text = examples(doc_text())[name]
    model = MODELS[name]
    doc = model.parse(text)
    assert doc.problems == ()
    assert model.render(doc) == text


def test_examples_have_entries_with_exact_lines() -> None:
    found = examples(doc_text())
    log_text = found["LOG.md"]
    entries = log.parse(log_text).entries
    assert [(e.cycle, e.outcome) for e in entries] == [
        (478, "built"), (479, "published"), (480, "no-build"), (None, None), (481, "published")]
    lines = log_text.split("\n")
    for entry in entries:
        assert lines[entry.line - 1] == entry.heading()
        assert lines[entry.end - 1].strip() and (entry.end == len(lines) - 1 or not lines[entry.end])
    decided = decisions.parse(found["DECISIONS.md"])
    assert [d.id for d in decided.awaiting] == ["D-0044"]
    assert [d.id for d in decided.settled] == ["D-0041", "D-0043", "D-0042"]     # D-0041 answered in place
    assert all(d.answered is not None for d in decided.settled)
    learned = lessons.parse(found["LESSONS.md"])
    assert [item.status for item in learned.lessons][:2] == ["promoted R-02", "promoted R-03"]
    proven = rules.parse(found["RULES.md"])
    assert {r.lesson for r in proven.proven if r.lesson} <= {item.id for item in learned.lessons}


def test_roadmap_example_current_section() -> None:
    text = examples(doc_text())["ROADMAP.md"]
    section = roadmap.current_section(text)
    assert section is not None and section.title == "December: docs site (current)"
    assert roadmap.first_open_item(text) == "Quick start page"


def test_config_example_is_all_defaults(tmp_path: Path) -> None:
    (tmp_path / "gitmem.yaml").write_text(examples(doc_text())["gitmem.yaml"], encoding="utf-8")
    config = load_config(tmp_path)
    assert config.warnings == ()
    assert config == Config()


def test_examples_pass_gitmem_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    repo = init_repo(tmp_path)
    write_examples(tmp_path, examples(doc_text()))
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--worktree"]) == 0
    assert capsys.readouterr() == ("", "")
    # The same files staged (what the pre-commit hook sees) pass too.
    repo.index.add_all()
    repo.index.write()
    assert main(["check"]) == 0
    assert capsys.readouterr() == ("", "")


def test_examples_fail_check_when_broken(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    """The clean run above means something: the same repo with one example broken is refused."""
    init_repo(tmp_path)
    files = examples(doc_text())
    files["LOG.md"] = files["LOG.md"].replace("· cycle 480 · no-build", "· cycle 479 · no-build")
    write_examples(tmp_path, files)
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--worktree"]) == 1
    out = capsys.readouterr().out
    line = next(i for i, x in enumerate(files["LOG.md"].split("\n"), 1) if "cycle 479 · no-build" in x)
    first, *rest = out.splitlines()
    assert first == (f"LOG.md:{line}: GM303 cycle 479 does not follow cycle 479 [log-cycle-not-increasing]"
                     " (hint: the next cycle is 480)")
    # NOW's block for cycle 480 names a cycle LOG no longer has (rules 4): the two files must agree.
    assert [item.split(" [")[0].split(": ", 1)[1] for item in rest] == [
        "GM105 the NOW block for cycle 480 has no LOG entry, and the next cycle is 482"]


def test_diagnostics_sample_is_real_output(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    text = doc_text()
    expected = re.search(r"<!-- output: check -->\n```text\n(.*?)```\n", text, re.S)
    assert expected is not None
    init_repo(tmp_path)
    files = examples(text)
    files["LOG.md"] += "\n## 2026-11-30 15:00 UTC · cycle 482 · no-build\n- Task: release 1.4.3\n"
    write_examples(tmp_path, files)
    (tmp_path / "NOW.md").write_bytes(files["NOW.md"].replace("\n", "\r\n").encode("utf-8"))
    monkeypatch.chdir(tmp_path)
    assert main(["check", "--worktree"]) == 1
    assert capsys.readouterr().out == expected.group(1)


# -- the tables ---------------------------------------------------------------------------------

def test_codes_table_matches_registry() -> None:
    assert between(doc_text(), CODES_BEGIN, CODES_END) == codes_table(), \
        "docs/format.md is out of date: run `python tests/docs/test_format_docs.py`"


def test_codes_table_lists_each_code_once() -> None:
    codes = re.findall(r"^\| (GM\d{3}) \|", between(doc_text(), CODES_BEGIN, CODES_END), re.M)
    assert codes == [item.code for item in RULES]
    assert len(set(codes)) == len(codes)


def test_config_table_matches_config_defaults() -> None:
    rows = {}
    for line in between(doc_text(), CONFIG_BEGIN, CONFIG_END).splitlines()[2:]:
        match = CONFIG_ROW_RE.match(line)
        assert match, f"malformed config row: {line}"
        rows[match.group(1)] = match.group(2)
    expected = config_defaults()
    missing = sorted(set(expected) - set(rows))
    assert not missing, f"docs/format.md lacks config keys: {missing}"
    assert rows == expected



def test_every_code_new_in_this_release_is_in_the_upgrade_section() -> None:
    from gitmem import codes

    text = doc_text()
    section = text[text.index("## New in this release"):]
    new = [item for item in codes.CODES if item.since == codes.RULES_VERSION]
    variants = [name for item in codes.CODES for name, message in item.messages.items()
                if message.since == codes.RULES_VERSION and item.since < codes.RULES_VERSION]
    assert new or variants       # a release that bumps the rules version adds a code or a variant
    assert all(item.code in section for item in new)
    assert all(f"`{name}`" in section for name in variants)


def regenerate() -> None:
    text = doc_text()
    start = text.index(CODES_BEGIN) + len(CODES_BEGIN)
    DOC.write_text(text[:start] + codes_table() + text[text.index(CODES_END, start):], encoding="utf-8")


if __name__ == "__main__":
    regenerate()
    sys.exit(0)
