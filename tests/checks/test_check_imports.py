"""What the `gitmem check` process imports on the pre-commit path, what it compiles at start-up (classes,
patterns) and that it runs no garbage collection, held so the start-up cost cannot creep back.

`gitmem check` runs on every commit, and its start-up is most of its cost (benchmarks/bench_check.py compares it
with `python -c "import pygit2, click"`). Its process imports the gitmem modules listed here and nothing that
only other commands need: no YAML round-trip or markdown parser, no model SDK, no cycle, agent, recall or close
code. A module that joins the list is a choice made here, with its cost measured, not an accident."""
from __future__ import annotations

import ast
import os
import re
import subprocess
import sys

from tests.support.gitcli import git
from tests.support.helpers import GitRepo

# Every gitmem module a `gitmem check` of a staged LOG entry, NOW block and lesson imports.
ALLOWED = {
    "gitmem", "gitmem.checks", "gitmem.checks.rule_inputs", "gitmem.checks.non_memory_files",
    "gitmem.checks.every_workspace", "gitmem.checks.owned_paths",
    "gitmem.checks.generation", "gitmem.checks.render", "gitmem.checks.every_memory_file", "gitmem.checks.sizes",
    "gitmem.checks.check_and_verify", "gitmem.checks.violation", "gitmem.cli", "gitmem.cli.common", "gitmem.codes",
    "gitmem.config", "gitmem.config.nesting", "gitmem.config.plain_yaml", "gitmem.config.validate",
    "gitmem.errors", "gitmem.gitio", "gitmem.gitio.repository", "gitmem.gitio.snapshots", "gitmem.memory",
    "gitmem.memory.fences", "gitmem.confined", "gitmem.confined.files", "gitmem.secrets", "gitmem.workspace",
    # the building blocks of every memory file, one module per job where one module held them all (the same
    # classes and patterns; the seven more modules cost about 0.1 ms each to import): a parse's problems,
    # timestamps, decoding, headings and sections, digits, fields, blank lines, the common ends of two texts
    "gitmem.memory.problems", "gitmem.memory.timestamps", "gitmem.memory.decoding", "gitmem.memory.sections",
    "gitmem.memory.digits", "gitmem.memory.fields", "gitmem.memory.lines", "gitmem.memory.common_ends",
    # the staged LOG entry and NOW block are parsed: their readers, and the clock checks on what they write
    "gitmem.memory.log", "gitmem.memory.now", "gitmem.memory.once", "gitmem.memory.clock_skew",
    "gitmem.checks.written_times",
    # code moved out of modules above so no two modules import each other (no new cost): what the checks read,
    # and LOG's entry rules
    "gitmem.checks.inputs", "gitmem.checks.log_entries",
    # LOG's sealed volumes (rules 6): a commit may change one, LOG.md or not, so every check lists their folder
    # (a tree or index lookup; the modules import nothing new, about 0.3 ms)
    "gitmem.checks.volume_checks", "gitmem.memory.volumes",
    # the records' methods as closures, not compiled at start-up as @dataclass's are (a saving, not a cost)
    "gitmem.records",
    # a clone whose .gitattributes names the memory merge driver and whose git config has none (GM925): once a run,
    # one small file read and one config lookup; the module imports nothing new
    "gitmem.checks.clone_setup",
}
# What only other commands need: never on the pre-commit path.
FORBIDDEN = ("ruamel", "mistune", "anthropic", "mcp", "pydantic", "httpx", "asyncio", "sqlite3", "gitmem.cycle",
             "gitmem.agents", "gitmem.recall", "gitmem.close", "gitmem.fleet", "gitmem.views", "gitmem.report",
             "gitmem.publish", "gitmem.sessions", "gitmem.scaffold", "gitmem.gitio.history",
             # stdlib modules neither pygit2 nor click import, each milliseconds: the default time zone (UTC)
             # needs no zone database, a small blob's git id is libgit2's hash, and no JSON is read
             "zoneinfo", "hashlib", "json")
IMPORTED = re.compile(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)$", re.M)


def _imported(repo: GitRepo) -> set[str]:
    # Without the suite's coverage measurement, which starts in every Python subprocess and imports json and
    # sqlite3 there: what is measured is the check as a commit runs it.
    env = {name: value for name, value in os.environ.items() if not name.startswith(("COVERAGE", "COV_CORE"))}
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "gitmem", "check"], cwd=repo.path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return set(IMPORTED.findall(done.stderr))


def test_check_of_a_staged_change_imports_only_what_the_pre_commit_path_needs(memrepo: GitRepo, cli) -> None:
    for argv in (["log", "add", "--task", "t", "--outcome", "built", "--result", "r"],
                 ["now", "add", "--did", "d", "--human", "nothing", "--next", "n"]):
        result = cli(argv, cwd=memrepo.path)
        assert result.code == 0, result.err
    (memrepo.path / "notes.md").write_text("a note\n")
    git(memrepo.path, "add", "-A")
    assert git(memrepo.path, "diff", "--cached", "--name-only").split()       # a real pre-commit: staged changes
    found = _imported(memrepo)
    ours = {name for name in found if name == "gitmem" or name.startswith("gitmem.")}
    assert ours - ALLOWED == set(), "new on the pre-commit path; measure its cost and list it here"
    assert [name for name in found if name.startswith(FORBIDDEN)] == []


# Run `gitmem check` in this process, then name every class of gitmem's whose __init__ was compiled from
# source at start-up (what @dataclass does, about 0.6 ms a class; gitmem.records builds them without it).
_COMPILED_CLASSES = """
import runpy, sys
sys.argv = ["gitmem", "check"]
try:
    runpy.run_module("gitmem", run_name="__main__")
except SystemExit as stop:
    assert not stop.code, stop.code
found = sorted(f"{name}.{value.__qualname__}" for name, module in list(sys.modules.items())
               if name == "gitmem" or name.startswith("gitmem.") for value in vars(module).values()
               if isinstance(value, type) and value.__module__ == name and
               getattr(getattr(value.__dict__.get("__init__"), "__code__", None), "co_filename", "") == "<string>")
print("compiled:", found, file=sys.stderr)
"""


def test_check_of_a_staged_change_compiles_no_class_at_start_up(memrepo: GitRepo, cli) -> None:
    result = cli(["log", "add", "--task", "t", "--outcome", "built", "--result", "r"], cwd=memrepo.path)
    assert result.code == 0, result.err
    git(memrepo.path, "add", "-A")
    done = subprocess.run([sys.executable, "-c", _COMPILED_CLASSES], cwd=memrepo.path, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "compiled: []" in done.stderr.splitlines(), done.stderr


# Run `gitmem check` in this process, then name every regular expression a gitmem module holds compiled.
_COMPILED_PATTERNS = """
import re, runpy, sys
sys.argv = ["gitmem", "check"]
try:
    runpy.run_module("gitmem", run_name="__main__")
except SystemExit as stop:
    assert not stop.code, stop.code
found = sorted(f"{name}.{attr}" for name, module in list(sys.modules.items())
               if name == "gitmem" or name.startswith("gitmem.") for attr, value in vars(module).items()
               if isinstance(value, re.Pattern))
print("patterns:", found, file=sys.stderr)
"""
# The patterns a check compiles when its modules load (50-500 µs each), each one it uses on a staged cycle: the
# timestamp, the heading separator, field lines, cycle and amendment headings, fence marks, gitmem.yaml's
# scalars. Every other pattern is compiled on first use (`functools.cache`), so this list may only shrink.
COMPILED_AT_IMPORT = {
    "gitmem.config.plain_yaml._FLOAT", "gitmem.config.plain_yaml._INT", "gitmem.config.plain_yaml._KEY",
    "gitmem.config.plain_yaml._UNSURE", "gitmem.memory.fences._MARK_AFTER_NEWLINE",
    "gitmem.memory.fences._MARK_AFTER_NEWLINE_BYTES", "gitmem.memory.log._AMENDS_RE", "gitmem.memory.log._CYCLE_RE",
    "gitmem.memory.now._CYCLE_RE", "gitmem.memory.fields._FIELD_RE", "gitmem.memory.sections._SEP_RE",
    "gitmem.memory.sections._TS_PREFIX_RE", "gitmem.memory.timestamps._TS_RE",
}


def test_check_of_a_staged_change_compiles_at_import_only_patterns_it_uses(memrepo: GitRepo, cli) -> None:
    result = cli(["log", "add", "--task", "t", "--outcome", "built", "--result", "r"], cwd=memrepo.path)
    assert result.code == 0, result.err
    git(memrepo.path, "add", "-A")
    done = subprocess.run([sys.executable, "-c", _COMPILED_PATTERNS], cwd=memrepo.path, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    line = next(line for line in done.stderr.splitlines() if line.startswith("patterns: "))
    found = set(ast.literal_eval(line.removeprefix("patterns: ")))
    assert found and found <= COMPILED_AT_IMPORT, sorted(found - COMPILED_AT_IMPORT)


# Count the cyclic collector's passes in a fresh process that runs gitmem as `python -m gitmem` and the console
# script do (`gitmem.__main__.start`), from before click or any of gitmem is imported: imports are what would
# trigger them.
_COLLECTIONS = """
import gc, sys
import gitmem.cli
passes, during = [], []
gc.callbacks.append(lambda phase, info: passes.append(info["generation"]) if phase == "start" else None)
chosen = gitmem.cli.Collector.chosen
def recorded(self, command):
    chosen(self, command)
    during.append((gc.isenabled(), gc.get_threshold()[0]))
gitmem.cli.Collector.chosen = recorded
from gitmem.__main__ import start
code = start()
print("collections:", len(passes), "during:", *during[-1], "after:", gc.isenabled(), file=sys.stderr)
raise SystemExit(code)
"""


def _collections(repo: GitRepo, *argv: str) -> str:
    done = subprocess.run([sys.executable, "-c", _COLLECTIONS, *argv], cwd=repo.path, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stderr.splitlines()[-1]


def test_check_runs_without_the_cyclic_collector_and_other_commands_with_it(memrepo: GitRepo, cli) -> None:
    """`check` makes no pass at all; verify (whole ranges) and status (most of the memory) run with the collector
    on, at the young threshold of commands that parse memory. The process exits with it off (no last pass)."""
    from gitmem.cli import YOUNG_THRESHOLD

    result = cli(["log", "add", "--task", "t", "--outcome", "built", "--result", "r"], cwd=memrepo.path)
    assert result.code == 0, result.err
    git(memrepo.path, "add", "-A")
    assert _collections(memrepo, "check") == "collections: 0 during: False 700 after: False"
    assert _collections(memrepo, "--no-color", "check") == "collections: 0 during: False 700 after: False"
    for argv in (["verify", "--range", "HEAD..HEAD"], ["status"]):
        line = _collections(memrepo, *argv)
        assert line.endswith(f"during: True {YOUNG_THRESHOLD} after: False"), (argv, line)


def test_main_leaves_the_collector_as_it_found_it(memrepo: GitRepo, cli) -> None:
    import gc

    assert gc.isenabled()
    for argv in (["check"], ["status"], ["--version"], ["no-such-command"]):
        cli(argv, cwd=memrepo.path)
        assert gc.isenabled(), argv
    gc.disable()
    try:
        for argv in (["check"], ["status"]):
            cli(argv, cwd=memrepo.path)
            assert not gc.isenabled(), argv
    finally:
        gc.enable()
