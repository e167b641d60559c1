"""Hostile input, class 7b: parsing is total. Structured text nested past any parser's recursion (YAML, JSON,
TOML), names too long for the file system and links planted at an output path each give one line and their
exit code, never a traceback; and no reader interprets a document deeper than MAX_DEPTH."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from gitmem.config.nesting import MAX_DEPTH, TooDeep, depth, loads_json, parsing, within_depth, yaml_loader
from gitmem.errors import ExitCode
from tests.support.helpers import GitRepo
from tests.support.hostile import no_traceback

DEPTHS = (1_000, 100_000)


def _one_line(err: str) -> bool:
    return no_traceback(err) and len(err.strip().splitlines()) == 1


def _deep_yaml(levels: int, style: str) -> str:
    if style == "flow-list":
        return "a: " + "[" * levels + "]" * levels + "\n"
    if style == "flow-map":
        return "a: " + "{b: " * levels + "1" + "}" * levels + "\n"
    return "a:\n" + "".join("  " * i + "b:\n" for i in range(1, min(levels, 5_000)))     # block style


@pytest.mark.parametrize("levels", DEPTHS)
@pytest.mark.parametrize("style", ["flow-list", "flow-map", "block"])
@pytest.mark.parametrize("command", [["check"], ["check", "--worktree"], ["status"], ["context"], ["pending"]])
def test_a_deeply_nested_config_is_one_line_exit_2_for_every_command(memrepo: GitRepo, cli, levels: int, style: str,
                                                                      command: list[str]) -> None:
    memrepo.write("gitmem.yaml", _deep_yaml(levels, style))
    memrepo.stage_files({"gitmem.yaml": _deep_yaml(levels, style)})
    result = cli(command, cwd=memrepo.path)
    assert result.code == ExitCode.USAGE, result.err
    assert _one_line(result.err) and "gitmem.yaml" in result.err and "nested deeper" in result.err


@pytest.mark.parametrize("levels", DEPTHS)
@pytest.mark.parametrize("shape", ["list", "object"])
def test_a_deeply_nested_hook_payload_is_not_a_traceback(memrepo: GitRepo, cli, levels: int, shape: str) -> None:
    payload = ("[" * levels + "]" * levels) if shape == "list" else ('{"a":' * levels + "1" + "}" * levels)
    result = cli(["hook", "session-start"], cwd=memrepo.path, stdin=payload)
    assert result.code == ExitCode.OK and _one_line(result.err) and "not the hook's JSON" in result.err
    # the same shape as every other hook note: `gitmem: hook: <what it found>: <what it does about it>`
    assert result.err.strip() == f"gitmem: hook: stdin is not the hook's JSON (nested deeper than {MAX_DEPTH} " \
                                 "levels): going on without it"


def test_the_bound_is_checked_without_recursing() -> None:
    deep: list[object] = []
    for _ in range(200_000):          # far past Python's recursion limit: depth() must not recurse
        deep = [deep]
    assert depth(deep) > MAX_DEPTH
    with pytest.raises(TooDeep):
        within_depth(deep)
    nested = {"a": [{"b": [1, 2]}]}
    assert depth(nested) == 4 and within_depth(nested) is nested
    assert loads_json(json.dumps([[[1]]] )) == [[[1]]]
    for text in ("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), "[" * 100_000 + "]" * 100_000):
        with pytest.raises(ValueError, match="nested deeper"):
            loads_json(text)
    with pytest.raises(TooDeep), parsing():
        raise RecursionError


@pytest.mark.parametrize("typ", ["rt", "safe"])
@pytest.mark.parametrize("opening", ["[", "{a: "])
def test_a_yaml_reader_stops_at_the_first_flow_collection_past_the_bound(monkeypatch: pytest.MonkeyPatch, typ: str,
                                                                         opening: str) -> None:
    # ruamel.yaml's scanner walks every open flow level for each token: read to the end, `[[[[…` cost the
    # square of its depth (2.6 s for each command to refuse a gitmem.yaml 1,000 levels deep)
    from ruamel.yaml.scanner import Scanner

    opened: list[int] = []
    fetch = Scanner.fetch_flow_collection_start
    monkeypatch.setattr(Scanner, "fetch_flow_collection_start",
                        lambda self, *args: (opened.append(1), fetch(self, *args))[1])
    closing = "]" if opening == "[" else "}"
    with pytest.raises(TooDeep):
        yaml_loader(typ).load(opening * 100_000 + "1" * (opening != "[") + closing * 100_000)
    assert len(opened) == MAX_DEPTH
    deepest = yaml_loader(typ).load(opening * MAX_DEPTH + "1" * (opening != "[") + closing * MAX_DEPTH)
    assert depth(deepest) == MAX_DEPTH and within_depth(deepest) is deepest


def _laughs(key: str) -> str:
    """Nine anchors, each a list of nine aliases of the one before: 9^9 lists once aliases are followed."""
    lines = [f"{key}0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    lines += [f"{key}{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("command", [["check"], ["status"], ["init", "."]])
def test_a_billion_laughs_config_is_one_line_exit_2(memrepo: GitRepo, cli, command: list[str]) -> None:
    """Every walk over the aliased lists (the depth bound's own included) took minutes: `check` hung."""
    text = memrepo.read("gitmem.yaml") + _laughs("x")
    memrepo.write("gitmem.yaml", text)
    memrepo.stage_files({"gitmem.yaml": text})
    result = cli(command, cwd=memrepo.path)
    assert result.code == ExitCode.USAGE, result.err
    assert _one_line(result.err) and "gitmem.yaml" in result.err and "aliases expand" in result.err


def test_a_billion_laughs_pre_commit_config_is_one_line(memrepo: GitRepo, cli) -> None:
    memrepo.write(".pre-commit-config.yaml", "repos: []\n" + _laughs("x"))
    result = cli(["init", "."], cwd=memrepo.path)
    assert result.code != ExitCode.OK and _one_line(result.err), result.err
    assert ".pre-commit-config.yaml" in result.err and "aliases expand" in result.err


def test_ordinary_anchors_still_load() -> None:
    from ruamel.yaml import YAML

    from gitmem.config.nesting import MAX_REVISITS, TooExpanded

    shared = YAML(typ="safe").load("base: &b {a: [1, 2]}\n" + "".join(f"k{i}: *b\n" for i in range(500)))
    assert within_depth(shared) is shared
    one: list[str] = ["x"]
    wide = {"all": [one] * (MAX_REVISITS + 2)}          # what a YAML loader makes of that many aliases
    with pytest.raises(TooExpanded):
        within_depth(wide)


HUGE = "9" * 5_000          # past Python's int() digit limit, which every parser's int() hits


@pytest.mark.parametrize("command", [["check"], ["status"]])
def test_a_huge_integer_in_the_config_is_one_line_exit_2(memrepo: GitRepo, cli, command: list[str]) -> None:
    text = memrepo.read("gitmem.yaml") + f"extra_number: {HUGE}\n"
    memrepo.write("gitmem.yaml", text)
    memrepo.stage_files({"gitmem.yaml": text})
    result = cli(command, cwd=memrepo.path)
    assert result.code == ExitCode.USAGE and _one_line(result.err), result.err
    assert result.err.strip() == "gitmem: gitmem.yaml:1: GM930 a number longer than 4300 digits"


def test_a_huge_integer_in_json_and_toml_is_refused_by_the_bounded_readers(memrepo: GitRepo, cli) -> None:
    from gitmem.config.nesting import TooManyDigits

    with pytest.raises(TooManyDigits):
        loads_json(f'{{"n": {HUGE}}}')
    result = cli(["hook", "session-start"], cwd=memrepo.path, stdin=f'{{"session_id": {HUGE}}}')
    assert result.code == ExitCode.OK and _one_line(result.err) and "a number longer than" in result.err
    pytest.importorskip("tomlkit")
    (memrepo.path / ".codex").mkdir(exist_ok=True)
    (memrepo.path / ".codex" / "config.toml").write_text(f"n = {HUGE}\n")
    result = cli(["init", str(memrepo.path), "--agent", "codex"], cwd=memrepo.path)
    assert no_traceback(result.err) and result.code == ExitCode.USAGE, result.err
    assert _one_line(result.err) and "config.toml" in result.err          # tomlkit's own "Invalid number"

def test_a_deep_codex_config_is_one_line(memrepo: GitRepo, cli) -> None:
    pytest.importorskip("tomlkit")
    (memrepo.path / ".codex").mkdir(exist_ok=True)
    (memrepo.path / ".codex" / "config.toml").write_text("a = " + "[" * 5_000 + "]" * 5_000 + "\n")
    result = cli(["init", str(memrepo.path), "--agent", "codex"], cwd=memrepo.path)
    assert no_traceback(result.err) and result.code != ExitCode.INTERNAL, result.err


# Names the file system cannot hold: a component over 255 bytes (first, inside, exactly 256, in UTF-8 bytes
# under 256 characters) and a path over 4096 bytes of short components.
LONG_NAMES = {"300": "a" * 300, "inside": "x/" + "b" * 300 + "/y", "256": "c" * 256, "utf8": "é" * 130,
              "path": "d/" * 2100 + "e"}


@pytest.mark.parametrize("name", sorted(LONG_NAMES))
@pytest.mark.parametrize("command", ["init", "demo", "report --out", "mcp --root"])
def test_a_name_too_long_is_one_line_exit_2(memrepo: GitRepo, cli, tmp_path: Path, name: str, command: str) -> None:
    result = cli([*command.split(), LONG_NAMES[name]], cwd=memrepo.path if command != "init" else tmp_path,
                 stdin="")
    assert result.code == ExitCode.USAGE and _one_line(result.err), result.err
    assert LONG_NAMES[name][:40] in result.err            # it names the path
    if command != "mcp --root":                           # mcp says the name is no memory repository
        assert "too long for the file system" in result.err


@pytest.mark.parametrize("name", sorted(LONG_NAMES))
@pytest.mark.parametrize("event", ["session-start", "stop"])
def test_a_hook_payload_with_a_cwd_too_long_is_a_note_exit_0(tmp_path: Path, cli, name: str, event: str) -> None:
    payload = json.dumps({"session_id": "s-1", "cwd": LONG_NAMES[name], "hook_event_name": "SessionStart"})
    result = cli(["hook", event], cwd=tmp_path, stdin=payload)
    assert result.code == ExitCode.OK and no_traceback(result.err), result.err


_CONFIG_NAMES = {
    "files": lambda text, name: text.replace("  log: LOG.md", f"  log: {name}"),
    "memory_dir": lambda text, name: text.replace("memory_dir: .", f"memory_dir: {name}"),
    "workspace-dir": lambda text, name: text + f"\nworkspaces:\n  w2:\n    memory_dir: {name}\n",
    "workspace-name": lambda text, name: text + f"\nworkspaces:\n  {name.replace('/', '-')}:\n    memory_dir: w2\n",
    "workspace-files": lambda text, name: text + f"\nworkspaces:\n  w2:\n    memory_dir: w2\n    files:\n"
                                                 f"      log: {name}\n",
}


@pytest.mark.parametrize("name", ["300", "inside", "path"])
@pytest.mark.parametrize("key", sorted(_CONFIG_NAMES))
@pytest.mark.parametrize("command", [["check", "--worktree"], ["status"], ["context"], ["init", "."],
                                     ["log", "add", "--task", "t", "--outcome", "built", "--result", "r"]])
def test_a_memory_path_too_long_in_gitmem_yaml_is_one_line_exit_2(memrepo: GitRepo, cli, name: str, key: str,
                                                                  command: list[str]) -> None:
    memrepo.write("gitmem.yaml", _CONFIG_NAMES[key](memrepo.read("gitmem.yaml"), LONG_NAMES[name]))
    result = cli(command, cwd=memrepo.path)
    assert result.code == ExitCode.USAGE and no_traceback(result.err), result.err
    assert "gitmem.yaml" in result.err and len([line for line in result.err.splitlines()
                                                if line.startswith("gitmem:")]) == 1, result.err


def test_a_tree_file_whose_name_the_system_refuses_says_so() -> None:
    """The one errno map for trusted files names the path and the cause, not `free some space`."""
    import errno

    from gitmem.confined import files

    refused = files.failed("LOG.md", OSError(errno.ENAMETOOLONG, "File name too long"), "written")
    assert refused is not None and str(refused).startswith("LOG.md cannot be written: its name is too long")


@pytest.mark.parametrize("planted", ["link-outside", "link-dangling", "fifo", "directory"])
@pytest.mark.parametrize("where", ["default", "--out"])
def test_report_never_writes_through_what_is_planted_at_its_output(memrepo: GitRepo, cli, tmp_path: Path,
                                                                   planted: str, where: str) -> None:
    target = memrepo.path / ".git" / "gitmem" / "report.html" if where == "default" else tmp_path / "out.html"
    target.parent.mkdir(parents=True, exist_ok=True)
    victim = tmp_path / "victim.txt"
    victim.write_text("the human's file\n")
    if planted == "link-outside":
        target.symlink_to(victim)
    elif planted == "link-dangling":
        target.symlink_to(tmp_path / "nowhere" / "made.html")
    elif planted == "fifo":
        os.mkfifo(target)
    else:
        target.mkdir()
    argv = ["report"] + (["--out", str(target)] if where == "--out" else [])
    result = cli(argv, cwd=memrepo.path)
    assert result.code == ExitCode.USAGE and _one_line(result.err), result.err
    assert "cannot write" in result.err
    assert victim.read_text() == "the human's file\n" and not (tmp_path / "nowhere").exists()


def test_report_writes_a_regular_file_over_its_last_one(memrepo: GitRepo, cli, tmp_path: Path) -> None:
    out = tmp_path / "out.html"
    out.write_text("x" * 100_000)
    result = cli(["report", "--out", str(out)], cwd=memrepo.path)
    assert result.code == ExitCode.OK, result.err
    assert out.read_text().startswith("<!") and not out.read_text().endswith("x" * 10)


@pytest.mark.parametrize("planted", ["deep-list", "deep-object", "not-json", "a-number", "wrong-shape"])
def test_a_planted_recall_state_is_rebuilt_not_a_traceback(memrepo: GitRepo, cli, planted: str) -> None:
    """The recall index lives in .git/gitmem, which the agent may write: a file's remembered state nested past
    the parser, or of another shape, is read as no state, and the file is indexed whole again."""
    import sqlite3

    memrepo.commit_files({"LOG.md": memrepo.read("LOG.md") + "\n## 2026-12-01 09:00 UTC · cycle 1 · built\n"
                                                              "- Task: t\n- Result: the quokka parser shipped\n"})
    assert cli(["recall", "quokka"], cwd=memrepo.path).code == ExitCode.OK
    state = {"deep-list": "[" * 100_000 + "]" * 100_000, "deep-object": '{"a":' * 5_000 + "1" + "}" * 5_000,
             "not-json": "{", "a-number": "7", "wrong-shape": json.dumps({"size": "x", "suffix": []})}[planted]
    with sqlite3.connect(memrepo.path / ".git" / "gitmem" / "recall.sqlite") as conn:
        conn.execute("UPDATE sources SET state = ?, size = -1", (state,))
    result = cli(["recall", "quokka"], cwd=memrepo.path)
    assert result.code == ExitCode.OK and no_traceback(result.err), result.err
    assert "quokka" in result.out


def test_an_embedding_model_header_nested_past_the_parser_is_refused(tmp_path: Path) -> None:
    import struct

    from gitmem.recall.embed import read_tensor

    header = ("[" * 100_000 + "]" * 100_000).encode()
    model = tmp_path / "model.safetensors"
    model.write_bytes(struct.pack("<Q", len(header)) + header)
    with model.open("rb") as handle, pytest.raises(ValueError, match="nested deeper"):
        read_tensor(handle, model.stat().st_size, "embeddings")


def test_a_lone_surrogate_in_json_is_refused_and_a_pair_is_text(memrepo: GitRepo, cli) -> None:
    from gitmem.config.nesting import LoneSurrogate

    assert loads_json(r'{"a": "\ud83d\ude00", "b": "\\ud800"}') == {"a": "\U0001f600", "b": "\\ud800"}
    for text in (r'{"a": "\ud800"}', r'["x\uDFFFy"]', r'{"\udc80": 1}'):
        with pytest.raises(LoneSurrogate):
            loads_json(text)
    result = cli(["hook", "session-start"], cwd=memrepo.path, stdin=r'{"cwd": "\ud800", "session_id": "s"}')
    assert result.code == ExitCode.OK and _one_line(result.err) and "lone surrogate" in result.err
