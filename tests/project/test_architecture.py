"""The shape of the package, read from its syntax trees (not text search, so `importlib` or `f"GM{n}"` can't
slip by): one git layer, one table of codes, one error map, no pygit2 object outside the git layer, and
packages stacked in layers that import only downwards."""
from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import gitmem

PACKAGE = Path(gitmem.__file__).parent
GIT_LAYER = PACKAGE / "gitio"
CODES = PACKAGE / "codes.py"
CODE_RE = re.compile(r"GM\d{3}")
RUNNERS = {"run", "Popen", "call", "check_call", "check_output", "system", "execv", "execvp", "execvpe", "spawnv",
           "which"}


def modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


@functools.cache
def tree(path: Path) -> ast.Module:
    """The module's syntax tree, parsed once per process: the checks only read it, and the whole-package ones
    walk all 241 modules (they parsed each again, 15 times in one parametrized test)."""
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def in_git_layer(path: Path) -> bool:
    return GIT_LAYER in path.parents


def docstrings(node: ast.AST) -> set[int]:
    """ids of the docstring constants: prose about a code (`GM903 covers…`) writes no code."""
    found: set[int] = set()
    for item in ast.walk(node):
        if isinstance(item, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = item.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def absolute(node: ast.ImportFrom, package: str) -> str:
    """The module a `from ... import` reads from; a relative one (`from ..cycle import x`) resolved against
    `package`, or left with its dots when no package is given."""
    if not node.level:
        return node.module or ""
    parts = package.split(".") if package else []
    anchor = parts[:len(parts) - node.level + 1]
    if not anchor:
        return "." * node.level + (node.module or "")
    return ".".join([*anchor, *([node.module] if node.module else [])])


def imported_modules(module: ast.Module, *, package: str = "") -> Iterator[tuple[int, str]]:
    """(line, dotted name) of every import, wherever it stands (in a function, under `if TYPE_CHECKING:`),
    including `importlib.import_module("x")` and `__import__("x")`.

    `from a import b` gives `a.b`, as `b` may be a module (`from gitmem import gitio`). A relative import is
    resolved against `package`, the package the importing module is in. An f-string module name gives its
    constant start up to the last dot (`f"gitmem.checks.{name}"` is somewhere in gitmem.checks)."""
    for node in ast.walk(module):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = absolute(node, package)
            yield from ((node.lineno, f"{base}.{alias.name}" if base and not base.endswith(".") else base + alias.name)
                        for alias in node.names)
        elif isinstance(node, ast.Call) and node.args:
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name not in ("import_module", "__import__"):
                continue
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                yield node.lineno, first.value
            elif isinstance(first, ast.JoinedStr) and first.values and isinstance(first.values[0], ast.Constant):
                start = str(first.values[0].value)
                yield node.lineno, start[:start.rfind(".")] if "." in start else start


def runs_git(node: ast.Call) -> bool:
    """A subprocess/os call whose program is `git` (an argv list, or a command line starting with it)."""
    name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
    if name not in RUNNERS or not node.args:
        return False
    first = node.args[0]
    if isinstance(first, (ast.List, ast.Tuple)) and first.elts:
        first = first.elts[0]
    return isinstance(first, ast.Constant) and isinstance(first.value, str) and (
        first.value == "git" or first.value.startswith("git "))


def test_the_scan_sees_the_package() -> None:
    assert len(modules()) > 50 and any(in_git_layer(p) for p in modules())


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_only_the_git_layer_imports_pygit2_or_runs_git(path: Path) -> None:
    if in_git_layer(path):
        return
    module = tree(path)
    assert [line for line, name in imported_modules(module) if name.split(".")[0] == "pygit2"] == []
    assert [node.lineno for node in ast.walk(module) if isinstance(node, ast.Call) and runs_git(node)] == []


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_gm_code_is_written_outside_the_codes_table(path: Path) -> None:
    if path == CODES:
        return
    module = tree(path)
    prose = docstrings(module)
    written = [node.lineno for node in ast.walk(module)
               if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in prose
               and CODE_RE.search(node.value)]
    built = [node.lineno for node in ast.walk(module) if isinstance(node, ast.JoinedStr)
             and any(isinstance(part, ast.Constant) and str(part.value).endswith("GM") for part in node.values)]
    glued = [node.lineno for node in ast.walk(module) if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add)
             and any(isinstance(side, ast.Constant) and side.value == "GM" for side in (node.left, node.right))]
    assert (written, built, glued) == ([], [], [])


def mentions_pygit2(annotation: ast.expr | None) -> bool:
    if annotation is None:
        return False
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        return "pygit2" in annotation.value
    return any(isinstance(node, ast.Name) and node.id == "pygit2" for node in ast.walk(annotation))


def public_functions(module: ast.Module) -> Iterator[ast.FunctionDef]:
    for node in module.body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
            yield node
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            yield from (item for item in node.body if isinstance(item, ast.FunctionDef)
                        and not item.name.startswith("_"))


@pytest.mark.parametrize("path", sorted(GIT_LAYER.rglob("*.py")), ids=lambda p: p.name)
def test_the_git_layer_returns_no_pygit2_object(path: Path) -> None:
    """Public functions of the git layer answer in plain types; nothing outside can then hold a pygit2 object."""
    leaking = [f.name for f in public_functions(tree(path)) if mentions_pygit2(f.returns)]
    assert leaking == []


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_nothing_outside_the_git_layer_reaches_into_a_repo_handle(path: Path) -> None:
    """`Repo.raw` is the pygit2 object: only the git layer may touch it."""
    if in_git_layer(path):
        return
    assert [node.lineno for node in ast.walk(tree(path))
            if isinstance(node, ast.Attribute) and node.attr == "raw"] == []


COMMAND_MODULES = sorted(p for p in (PACKAGE / "cli").glob("*.py") if p.name != "__init__.py")   # not the map


@pytest.mark.parametrize("path", COMMAND_MODULES, ids=lambda p: p.name)
def test_commands_pick_no_exit_code_for_a_library_error(path: Path) -> None:
    """The one error map is `gitmem.cli.main`: no command catches a library error only to return a code."""
    for node in ast.walk(tree(path)):
        if not isinstance(node, ast.ExceptHandler):
            continue
        body = [stmt for stmt in node.body if not isinstance(stmt, ast.Pass)]
        only_returns = len(body) == 1 and isinstance(body[0], ast.Return)
        assert not only_returns, f"{path.name}:{node.lineno}: an except block that only returns an exit code"


@pytest.mark.parametrize("path", COMMAND_MODULES, ids=lambda p: p.name)
def test_commands_raise_their_errors_to_the_error_map(path: Path) -> None:
    """A command that catches an error raises it on (`CommandFailed` keeps its wording): printing its own error
    line and returning a code would bypass the map's masking of secrets."""
    def exit_code(value: ast.expr | None) -> bool:
        return isinstance(value, ast.Attribute) and (value.attr == "exit_code" or (
            isinstance(value.value, ast.Name) and value.value.id == "ExitCode"))

    for node in ast.walk(tree(path)):
        if isinstance(node, ast.ExceptHandler):
            returned = [item.lineno for stmt in node.body for item in ast.walk(stmt)
                        if isinstance(item, ast.Return) and exit_code(item.value)]
            assert returned == [], f"{path.name}:{node.lineno}: an except block that returns an exit code"


def test_a_demonstration_of_the_rules_catches_what_they_forbid() -> None:
    """The rules are not vacuous: they flag each forbidden form in a sample."""
    sample = ast.parse('import importlib\nimportlib.import_module("pygit2")\nimport subprocess\n'
                       'subprocess.run(["git", "status"])\nx = f"GM{7}01"\ny = "GM" + "101"\nz = "GM905"\n')
    assert sorted(name for _, name in imported_modules(sample)) == ["importlib", "pygit2", "subprocess"]
    assert sum(runs_git(n) for n in ast.walk(sample) if isinstance(n, ast.Call)) == 1
    assert any(isinstance(n, ast.JoinedStr) for n in ast.walk(sample))
    assert any(isinstance(n, ast.Constant) and n.value == "GM905" for n in ast.walk(sample))
    returns = ast.parse("def f() -> pygit2.Commit: ...\ndef g() -> 'pygit2.Oid': ...\ndef h() -> str: ...")
    assert [f.name for f in public_functions(returns) if mentions_pygit2(f.returns)] == ["f", "g"]


# Each command's module is named for its command (`cli/report.py` is `gitmem report`), so cli/ may share names.
NAMED_FOR_COMMANDS = PACKAGE / "cli"


def module_name_clashes(paths: list[Path], root: Path) -> list[str]:
    """Module names outside cli/ that mean two things: two modules of one basename, or a module named as a package."""
    packages = {p.parent.name for p in paths if p.name == "__init__.py" and p.parent != root}
    seen: dict[str, list[str]] = {}
    for path in paths:
        if path.name != "__init__.py" and NAMED_FOR_COMMANDS.relative_to(PACKAGE) not in path.relative_to(root).parents:
            seen.setdefault(path.stem, []).append(str(path.relative_to(root)))
    return sorted(f"{name}: {', '.join(where)}" + (" and a package" if name in packages else "")
                  for name, where in seen.items() if len(where) > 1 or name in packages)


def test_no_module_name_means_two_things() -> None:
    assert module_name_clashes(modules(), PACKAGE) == []


def classes_defined(paths: list[Path]) -> dict[str, list[str]]:
    """Each top-level class name, and the modules (file:line) that define it."""
    found: dict[str, list[str]] = {}
    for path in paths:
        for node in tree(path).body:
            if isinstance(node, ast.ClassDef):
                found.setdefault(node.name, []).append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    return found


def test_no_class_name_is_defined_twice_in_the_package() -> None:
    """A class name says which thing it is: `Rule` is the proven rule, not also a path pattern or a report row."""
    twice = {name: where for name, where in classes_defined(modules()).items() if len(where) > 1}
    assert twice == {}


@pytest.mark.parametrize("name", ["Rule", "Change", "Streak"])
def test_rule_change_and_streak_are_each_defined_once(name: str) -> None:
    assert len(classes_defined(modules()).get(name, [])) == 1


# Names a package's modules share on purpose, as one interface: each is the same job done for a different file.
INTERFACES = {
    # Every check module's entry point; run_checks imports the families by name and calls `check` on each.
    "checks": {"check"},
    # One module per memory file, each with the same shape (the writer parses whichever file it rewrites).
    "memory": {"parse", "render", "parse_heading", "format_id"},
    # One module per import source format: where its CLI keeps it, and how its files read as facts.
    "interop": {"default_roots", "read"},
}


def packages() -> list[Path]:
    return sorted(p.parent for p in PACKAGE.rglob("__init__.py"))


def names_defined_twice(package: Path) -> dict[str, list[str]]:
    """Public top-level classes and functions that two modules of one package define.

    A `_private` helper is local to its module (nothing imports it), so two modules may each have their own.
    """
    shared = INTERFACES.get(package.name, set()) if package.parent == PACKAGE else set()
    found: dict[str, list[str]] = {}
    for path in sorted(package.glob("*.py")):
        for node in tree(path).body:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and not \
                    node.name.startswith("_") and node.name not in shared:
                found.setdefault(node.name, []).append(path.name)
    return {name: where for name, where in found.items() if len(where) > 1}


@pytest.mark.parametrize("package", packages(), ids=lambda p: str(p.relative_to(PACKAGE.parent)))
def test_no_name_is_defined_in_two_modules_of_a_package(package: Path) -> None:
    assert names_defined_twice(package) == {}


def public_definitions(paths: list[Path]) -> dict[str, list[str]]:
    """Each public top-level function or class name, and the modules (relative to the package) that define it."""
    found: dict[str, list[str]] = {}
    for path in paths:
        for node in tree(path).body:
            public = not node.name.startswith("_") if hasattr(node, "name") else False
            if public and isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                found.setdefault(node.name, []).append(str(path.relative_to(PACKAGE)))
    return found


@pytest.mark.parametrize("name", ["session_start", "stop", "salvage_branches", "install_line", "missing",
                                  "session_start_answer", "stop_answer", "session_start_command", "stop_command",
                                  "extra_install_line", "model_install_line", "missing_extra_message",
                                  "missing_model_message", "source_missing", "runner_kept_branches"])
def test_a_public_function_the_issue_found_in_two_packages_has_one_home(name: str) -> None:
    """The hook's answer and its click command, an extra's and a model's install line, three `missing`: each is
    now named for what it is, so a search for the name finds one definition, cli/ included."""
    assert len(public_definitions(modules()).get(name, [])) <= 1


# The public function names several modules define on purpose: one protocol, each module doing the same job for
# its own thing (name -> (the protocol, the modules that implement it)). Any other public top-level function name
# is defined in one module of gitmem/, cli/ included: a call qualified by its module (`files.write` and
# `export.write`) still leaves the reader to tell two things apart by where they live.
RULE_FAMILIES = frozenset(f"checks/{name}.py" for name in (
    "cross_workspace", "cycle_numbers", "decisions_checks", "every_memory_file", "lesson_cycles", "lessons_checks",
    "log_checks", "now_checks", "remap", "rules_checks", "sizes", "volume_checks"))
MEMORY_FILES = frozenset(f"memory/{name}.py" for name in ("decisions", "lessons", "log", "now", "rules"))
IMPORT_SOURCES = frozenset(f"interop/{name}.py" for name in (
    "agent_memory_repo", "claude_code", "cline", "codex", "gemini", "notes"))
PROTOCOLS: dict[str, tuple[str, frozenset[str]]] = {
    # gitmem.checks.inputs.RuleFamily: `check(inp, earlier=())`, one per rule family, run by run_checks.
    "check": ("RuleFamily.check", RULE_FAMILIES),
    # One module per memory file, the same shape for each: the writer parses whichever file it rewrites.
    "parse": ("a memory file's parse(text) -> its document", MEMORY_FILES),
    "render": ("a memory file's render(document) -> text", MEMORY_FILES),
    "parse_heading": ("a dated or numbered memory file's parse_heading(title)", MEMORY_FILES - {"memory/rules.py"}),
    "format_id": ("a numbered memory file's format_id(number)", MEMORY_FILES - {"memory/log.py", "memory/now.py"}),
    # One module per import source format (gitmem.interop.importing calls it by the source's name): where its CLI
    # keeps memory, and how its files read as facts.
    "read": ("an import source's read(reader, prefix) -> facts", IMPORT_SOURCES),
    "default_roots": ("an import source's default_roots(workspace, environ, home)", IMPORT_SOURCES),
}


def functions_sharing_a_name(parsed: dict[str, ast.Module],
                             protocols: dict[str, tuple[str, frozenset[str]]]) -> dict[str, list[str]]:
    """Public top-level function names that two modules of `parsed` (relative path -> tree) define, each with
    the modules: a protocol's name is fine in the modules that implement it, and in no other."""
    found: dict[str, list[str]] = {}
    for where, module in sorted(parsed.items()):
        for node in module.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_"):
                found.setdefault(node.name, []).append(where)
    implementers = {name: modules for name, (_, modules) in protocols.items()}
    return {name: where for name, where in found.items()
            if len(where) > 1 and not set(where) <= implementers.get(name, frozenset())}


def parsed_package() -> dict[str, ast.Module]:
    return {str(path.relative_to(PACKAGE)): tree(path) for path in modules()}


def test_no_public_function_name_is_defined_in_two_modules() -> None:
    """Failed before on 27 names: 24 no protocol at all (`collect` built a report, the dashboard and an import's
    facts; `plan`, `describe`, `load`, `refusal`, `files.write` and `export.write`, ...), and `check`, `read` and
    `render` defined outside their protocol too (the merge check, the click command, a trusted file's read, the
    dashboard). Each now says what it is."""
    assert functions_sharing_a_name(parsed_package(), PROTOCOLS) == {}


def test_every_protocol_module_implements_its_protocol() -> None:
    """The map names no module that lacks the function (a stale entry would let a clash in unseen)."""
    parsed = parsed_package()
    missing = sorted(f"{where}: {name}" for name, (_, where_all) in PROTOCOLS.items() for where in where_all
                     if not any(isinstance(node, ast.FunctionDef) and node.name == name for node in parsed[where].body))
    assert missing == []


def test_a_demonstration_of_the_shared_name_measure() -> None:
    """Two modules with one name clash, a module-qualified call or not; a protocol's name is fine among its
    implementers and clashes once one more module defines it; private helpers and methods never count."""
    parse = ast.parse
    sample = {"a/files.py": parse("def write(): ...\ndef _helper(): ...\nclass C:\n    def load(self): ..."),
              "b/export.py": parse("def write(): ...\ndef _helper(): ...\ndef load(): ...\nasync def fetch(): ..."),
              "c/one.py": parse("def read(): ...\nasync def fetch(): ..."), "c/two.py": parse("def read(): ...")}
    protocols = {"read": ("a source's read", frozenset({"c/one.py", "c/two.py"}))}
    assert functions_sharing_a_name(sample, protocols) == {"write": ["a/files.py", "b/export.py"],
                                                           "fetch": ["b/export.py", "c/one.py"]}
    sample["a/files.py"] = parse("def read(): ...")
    assert functions_sharing_a_name(sample, protocols)["read"] == ["a/files.py", "c/one.py", "c/two.py"]
    assert functions_sharing_a_name(sample, {}) == {"read": ["a/files.py", "c/one.py", "c/two.py"],
                                                    "fetch": ["b/export.py", "c/one.py"]}


def aliased_imports(module: ast.Module) -> list[str]:
    """gitmem modules and names imported under another name: a search for the name then misses the use."""
    found = []
    for node in ast.walk(module):
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").split(".")[0] == "gitmem"):
            found += [f"{node.lineno}: {alias.name} as {alias.asname}" for alias in node.names if alias.asname]
        elif isinstance(node, ast.Import):
            found += [f"{node.lineno}: {alias.name} as {alias.asname}" for alias in node.names
                      if alias.asname and alias.name.split(".")[0] == "gitmem"]
    return found


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_gitmem_names_are_imported_under_their_own_names(path: Path) -> None:
    """An alias that dodges a clash hides the clash: rename one side instead."""
    assert aliased_imports(tree(path)) == []


def test_a_demonstration_of_the_naming_rules() -> None:
    sample = ast.parse("from gitmem.close import gates as promote\nimport gitmem.codes as c\nfrom . import x as y\n"
                       "import numpy as np\nfrom pathlib import Path as P\n")
    assert [found.split(": ")[1] for found in aliased_imports(sample)] == ["gates as promote", "gitmem.codes as c",
                                                                            "x as y"]
    root = Path("pkg")
    paths = [root / "__init__.py", root / "a" / "__init__.py", root / "a" / "guard.py", root / "b" / "__init__.py",
             root / "b" / "guard.py", root / "b" / "a.py", root / "cli" / "__init__.py", root / "cli" / "b.py"]
    assert module_name_clashes(paths, root) == ["a: b/a.py and a package", "guard: a/guard.py, b/guard.py"]


MODULE_MAP_LINE = re.compile(r"^\s+(\w+\.py)\s{2,}\S", re.M)     # `  day.py   reading the day ...`
MODULE_MENTION = re.compile(r"(?<![\w/.])(\w+)\.py\b")


@pytest.mark.parametrize("package", packages(), ids=lambda p: str(p.relative_to(PACKAGE.parent)))
def test_a_package_docstring_names_its_real_modules(package: Path) -> None:
    """Every `name.py` a package's docstring names is one of its modules; a module map lists all of them."""
    text = ast.get_docstring(tree(package / "__init__.py")) or ""
    real = {p.name for p in package.glob("*.py")} - {"__init__.py"}
    assert {f"{name}.py" for name in MODULE_MENTION.findall(text)} - real == set()
    listed = MODULE_MAP_LINE.findall(text)
    if listed:
        assert sorted(listed) == sorted(real)


def test_the_close_package_has_a_module_map() -> None:
    assert len(MODULE_MAP_LINE.findall(ast.get_docstring(tree(PACKAGE / "close" / "__init__.py")) or "")) > 5


# -- layers -----------------------------------------------------------------------------------------------

# The packages and top-level modules of gitmem, bottom to top: each may import only itself and those below it,
# counting every import (in a function, under TYPE_CHECKING, through importlib). README's Architecture
# section shows the same list. "gitmem" is the root package, which holds only the version.
LAYERS = (
    "gitmem",          # the version
    "records",         # dataclasses built without exec() (the pre-commit path's start-up)
    "codes",           # every GM code
    "errors",          # exit codes
    "packaged",        # where the shipped template and hooks are
    "secrets",         # secret patterns and the allowlist
    "memory",          # the five files: pure parse and render
    "confined",        # the one open of a trusted file, never through a link
    "gitio",           # the only code that touches git
    "config",          # gitmem.yaml
    "extras",          # what each optional install adds
    "workspace",       # the Workspace handle, head and tail reads, the state directory
    "checks",          # the GM rules
    "memory_writer",   # validated writes, judged by the checks
    "sealing",         # the runner's seal of LOG and NOW, written with its commit
    "recall",
    "publish",
    "agents",          # backends, the agent's tools, protected paths
    "cycle",
    "close",
    "views",
    "interop",         # other agent CLIs' memories: import and export
    "report",
    "fleet",           # many agents' memory side by side, for one human
    "sessions",
    "scaffold",
    "cli",
    "__main__",
)
README = PACKAGE.parent / "README.md"


def units_on_disk() -> set[str]:
    """Every package and top-level module of gitmem/ (the root as "gitmem"), as the layers name them."""
    found = {"gitmem"}
    for entry in PACKAGE.iterdir():
        if entry.is_dir() and any(entry.rglob("*.py")):
            found.add(entry.name)
        elif entry.suffix == ".py" and entry.name != "__init__.py":
            found.add(entry.stem)
    return found


def unit_of(name: str, units: set[str]) -> str | None:
    """The layer a dotted name belongs to; None when it is not gitmem's (the standard library, pygit2)."""
    parts = name.split(".")
    if parts[0] != "gitmem":
        return None
    return parts[1] if len(parts) > 1 and parts[1] in units else "gitmem"   # `from gitmem import __version__`


def dotted(path: Path) -> tuple[str, str]:
    """(module name, the package its relative imports start from) of a file under gitmem/."""
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
        return ".".join(parts), ".".join(parts)
    return ".".join(parts), ".".join(parts[:-1])


def upward_imports(module: ast.Module, where: str, name: str, package: str, units: set[str]) -> list[str]:
    """`where:line imports X (layer a above layer b)` for each import of `module` (named `name`, in
    `package`) that reaches a layer above its own, or one the order does not know."""
    own = unit_of(name, units)
    assert own is not None
    found = []
    for line, imported in sorted(imported_modules(module, package=package)):
        target = unit_of(imported, units)
        if target is None or target == own:
            continue
        if target not in LAYERS or own not in LAYERS:
            found.append(f"{where}:{line} imports {imported} (layer {target if target not in LAYERS else own} "
                         "is not in LAYERS)")
        elif LAYERS.index(target) > LAYERS.index(own):
            found.append(f"{where}:{line} imports {imported} (layer {target} above layer {own})")
    return found


def test_every_package_and_top_level_module_has_a_layer() -> None:
    """A new package (or a renamed one) must take its place in the order; a layer that is gone must leave it."""
    assert len(set(LAYERS)) == len(LAYERS)
    assert sorted(units_on_disk() - set(LAYERS)) == []
    assert sorted(set(LAYERS) - units_on_disk()) == []


def test_readme_shows_the_layers_in_order() -> None:
    line = next(line for line in README.read_text(encoding="utf-8").splitlines() if line.startswith("Layers, "))
    assert tuple(re.findall(r"`([\w.]+)`", line.split(":", 1)[1])) == LAYERS


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_go_only_down_the_layers(path: Path) -> None:
    name, package = dotted(path)
    where = str(path.relative_to(PACKAGE.parent))
    assert upward_imports(tree(path), where, name, package, units_on_disk()) == []


def test_a_demonstration_of_the_layers_catches_an_upward_import() -> None:
    """Each form of import that reaches up is flagged: at the top, in a function, under TYPE_CHECKING, relative,
    `from gitmem import`, and importlib with a constant or an f-string; imports down or within are not."""
    sample = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "from gitmem import codes, gitio\n"                  # down: allowed
        "from gitmem.workspace import Workspace\n"           # 3: up
        "from . import snapshots\n"                          # within gitio: allowed
        "if TYPE_CHECKING:\n"
        "    from gitmem.checks.violation import Violation\n"  # 6: up, for type checkers only
        "def f():\n"
        "    from ..cycle import runner\n"                   # 8: up, relative
        "    from gitmem import cli\n"                       # 9: up, through the root
        "    import importlib\n"
        "    importlib.import_module('gitmem.views.status')\n"   # 11: up
        "    importlib.import_module(f'gitmem.recall.{x}')\n"    # 12: up
        "    __import__('gitmem.errors')\n")                   # down: allowed
    found = upward_imports(sample, "gitmem/gitio/sample.py", "gitmem.gitio.sample", "gitmem.gitio", units_on_disk())
    assert found == [
        "gitmem/gitio/sample.py:3 imports gitmem.workspace.Workspace (layer workspace above layer gitio)",
        "gitmem/gitio/sample.py:6 imports gitmem.checks.violation.Violation (layer checks above layer gitio)",
        "gitmem/gitio/sample.py:8 imports gitmem.cycle.runner (layer cycle above layer gitio)",
        "gitmem/gitio/sample.py:9 imports gitmem.cli (layer cli above layer gitio)",
        "gitmem/gitio/sample.py:11 imports gitmem.views.status (layer views above layer gitio)",
        "gitmem/gitio/sample.py:12 imports gitmem.recall (layer recall above layer gitio)",
    ]
    newcomer = upward_imports(ast.parse("from gitmem.gitio import Repo\n"), "gitmem/plugins/x.py",
                              "gitmem.plugins.x", "gitmem.plugins", {*units_on_disk(), "plugins"})
    assert newcomer == ["gitmem/plugins/x.py:1 imports gitmem.gitio.Repo (layer plugins is not in LAYERS)"]


# -- no circles -------------------------------------------------------------------------------------------

def module_graph(paths: list[Path]) -> dict[str, set[str]]:
    """Each gitmem module (a package is its `__init__`) and the gitmem modules it imports, counting every import
    (in a function, under TYPE_CHECKING, through importlib). `from a.b import c` reaches the module `a.b.c` when
    there is one, else `a.b`, where the name `c` is defined."""
    found = {dotted(path)[0]: path for path in paths}
    graph: dict[str, set[str]] = {}
    for name, path in found.items():
        graph[name] = set()
        for _, imported in imported_modules(tree(path), package=dotted(path)[1]):
            parts = imported.split(".")
            while parts and ".".join(parts) not in found:
                parts.pop()
            if parts and ".".join(parts) != name:
                graph[name].add(".".join(parts))
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import each other, around a circle (Tarjan's strongly connected components
    of more than one module), each sorted, in order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph.get(node, ())):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def test_no_two_modules_import_each_other_around_a_circle() -> None:
    """Failed before: `cycle/runner` imported `cycle/proposals`, which imported the agent's identity and the
    commit message back from the runner; `checks/amendments` and `checks/log_checks` imported each other, the
    rule families imported `CheckInput` from the package that imports them, and `fleet/fleetfile` and
    `fleet/read` imported each other. Each import, even one deferred into a function, is an edge."""
    assert circles(module_graph(modules())) == []


def test_a_demonstration_of_the_circle_rule() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e", "f"}, "f": {"e"}}
    assert circles(graph) == [["a", "b", "c"], ["e", "f"]]
    whole = module_graph(modules())
    # An import of a name reaches the module that defines it; one of a module, that module.
    assert {"gitmem.cycle.proposals", "gitmem.cycle.messages", "gitmem.checks"} <= whole["gitmem.cycle.runner"]
    assert "gitmem.checks.inputs" in whole["gitmem.checks.log_checks"]


def builds_the_agent_identity(module: ast.Module) -> list[int]:
    """Lines that make an `Identity` out of the agent's configured name (`….agent.name`)."""
    return [node.lineno for node in ast.walk(module) if isinstance(node, ast.Call)
            and (getattr(node.func, "attr", None) or getattr(node.func, "id", None)) == "Identity"
            and any(isinstance(arg, ast.Attribute) and arg.attr == "name" and isinstance(arg.value, ast.Attribute)
                    and arg.value.attr == "agent" for arg in node.args)]


def test_the_agent_identity_is_built_in_one_place() -> None:
    """Failed before: the runner, the salvage and the close each built it (`Config.agent.identity` now)."""
    built = {str(path.relative_to(PACKAGE)): lines for path in modules()
             if (lines := builds_the_agent_identity(tree(path)))}
    assert built == {}
    assert builds_the_agent_identity(ast.parse("gitio.Identity(config.agent.name, config.agent.email)")) == [1]
    from gitmem.config import Config
    from gitmem.gitio import Identity

    assert Config().agent.identity == Identity("gitmem-agent", "agent@gitmem.invalid")


def builds_a_yaml_reader(module: ast.Module) -> list[int]:
    """Lines that import ruamel.yaml's `YAML` class, the way to build a reader without the nesting bound."""
    return [line for line, name in imported_modules(module) if name in ("ruamel.yaml.YAML", "ruamel.yaml.main.YAML")]


def test_every_yaml_reader_is_built_by_the_bounded_loader() -> None:
    """Failed before: gitmem.yaml, the scripted agent's script, `.pre-commit-config.yaml` and other CLIs'
    frontmatter each built their own, and the frontmatter's had no nesting bound (`nesting.yaml_loader` now)."""
    built = {str(path.relative_to(PACKAGE)): lines for path in modules()
             if (lines := builds_a_yaml_reader(tree(path))) and path != PACKAGE / "config" / "nesting.py"}
    assert built == {}
    assert builds_a_yaml_reader(ast.parse("def f():\n    from ruamel.yaml import YAML\n")) == [2]


def parses_json_or_toml_unbounded(module: ast.Module) -> list[int]:
    """Lines that call `json.load(s)` or `tomllib.load(s)` (or import those functions): a parser that recurses
    once per level, read without `parsing()` and `within_depth()`."""
    found = [node.lineno for node in ast.walk(module) if isinstance(node, ast.Call)
             and isinstance(node.func, ast.Attribute) and node.func.attr in ("load", "loads")
             and isinstance(node.func.value, ast.Name) and node.func.value.id in ("json", "tomllib")]
    found += [line for line, name in imported_modules(module)
              if name in ("json.load", "json.loads", "tomllib.load", "tomllib.loads")]
    return sorted(found)


def test_every_json_and_toml_reader_is_the_bounded_one() -> None:
    """Failed before: the box's reader of the agent CLIs' own config (Codex's config.toml, Claude Code's
    settings.json), the key stand-in's reader of Codex's config and `-c` settings, the recall proofs cache and
    Gemini CLI's project registry called the parsers directly, and a file nested 100,000 levels deep raised
    RecursionError out of them (`nesting.loads_json`, `nesting.loads_toml` now)."""
    found = {str(path.relative_to(PACKAGE)): lines for path in modules()
             if (lines := parses_json_or_toml_unbounded(tree(path))) and path != PACKAGE / "config" / "nesting.py"}
    assert found == {}
    assert parses_json_or_toml_unbounded(ast.parse("import json\njson.loads('1')\n")) == [2]
    assert parses_json_or_toml_unbounded(ast.parse("from tomllib import loads\n")) == [1]


def test_every_rule_family_checks_with_the_one_signature() -> None:
    """Failed before: `check(inp)`, `check(inp, skip)` (called by keyword and by position) and `check(inp, found)`.
    One Protocol (`gitmem.checks.inputs.RuleFamily`), one signature: what the checks before it found."""
    import importlib
    import inspect

    from gitmem.checks import FAMILIES
    from gitmem.checks.inputs import RuleFamily

    wanted = inspect.signature(RuleFamily.check)
    wanted = wanted.replace(parameters=list(wanted.parameters.values())[1:])
    names = [name for name, _ in FAMILIES] + ["every_memory_file", "cross_workspace", "sizes", "remap"]
    for name in names:
        found = inspect.signature(importlib.import_module(f"gitmem.checks.{name}").check)
        assert str(found) == str(wanted), name
# -- a thin CLI ---------------------------------------------------------------------------------------------

# A click command parses, calls the library and renders (the sqlite-utils habit): its body, without the
# docstring, blank lines and comments, is at most this many lines. Work it does beyond that belongs in the
# library; rendering it needs goes in helpers beside it.
COMMAND_BODY_LINES = 10


def is_command(node: ast.FunctionDef) -> bool:
    """Decorated as a click command or group (`@click.command`, `@group.command("pr")`, `@click.group`)."""
    for decorator in node.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if isinstance(target, ast.Attribute) and target.attr in ("command", "group"):
            return True
    return False


def body_lines(node: ast.FunctionDef, source: list[str]) -> int:
    """Lines of a function's body past its docstring that hold code: not blank, not only a comment."""
    body = node.body[1:] if docstrings(node) else node.body
    if not body:
        return 0
    span = source[body[0].lineno - 1:body[-1].end_lineno]
    return sum(1 for line in span if line.strip() and not line.strip().startswith("#"))


def command_bodies(paths: list[Path]) -> dict[str, int]:
    """`module:function` -> body lines, for every click command in `paths`."""
    found = {}
    for path in paths:
        source = path.read_text(encoding="utf-8").splitlines()
        for node in ast.walk(tree(path)):
            if isinstance(node, ast.FunctionDef) and is_command(node):
                found[f"{path.name}:{node.name}"] = body_lines(node, source)
    return found


def test_click_commands_are_thin() -> None:
    bodies = command_bodies(COMMAND_MODULES + [PACKAGE / "cli" / "__init__.py"])
    assert len(bodies) > 30
    thick = sorted(f"{name}: {lines} lines" for name, lines in bodies.items() if lines > COMMAND_BODY_LINES)
    assert thick == [], "move the work into the library; the command parses, calls, renders"


def test_a_demonstration_of_the_command_measure() -> None:
    sample = ('import click\n@click.command()\ndef one() -> int:\n    """Doc\n\n    string."""\n    # why\n'
              '    x = 1\n\n    return x\n@grp.command("two")\ndef two() -> None:\n    pass\ndef helper() -> None:\n'
              '    pass\n')
    module = ast.parse(sample)
    source = sample.splitlines()
    measured = {node.name: body_lines(node, source) for node in ast.walk(module)
                if isinstance(node, ast.FunctionDef) and is_command(node)}
    assert measured == {"one": 2, "two": 1}


# -- the git layer's one door ------------------------------------------------------------------------------

GIT_LAYER_MODULES = frozenset(p.stem for p in GIT_LAYER.glob("*.py") if p.name != "__init__.py")


def past_the_git_layer(module: ast.Module, package: str = "") -> list[str]:
    """`line: name` of each import of a gitio submodule (`from gitmem.gitio.snapshots import Snapshot`,
    `from gitmem.gitio import snapshots`): `gitmem.gitio.NAME` is the layer's one door, where git's own errors
    become RepoError (gitio/__init__.py `_translating`); a submodule's function reached directly skips that."""
    found = []
    for line, name in imported_modules(module, package=package):
        parts = name.split(".")
        if parts[:2] == ["gitmem", "gitio"] and len(parts) > 2 and parts[2] in GIT_LAYER_MODULES:
            found.append(f"{line}: {name}")
    return found


@pytest.mark.parametrize("path", modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_outside_the_git_layer_only_its_facade_is_imported(path: Path) -> None:
    if in_git_layer(path):
        return
    assert past_the_git_layer(tree(path), dotted(path)[1]) == []


def test_a_demonstration_of_the_git_layer_door() -> None:
    sample = ast.parse("from gitmem import gitio\nfrom gitmem.gitio import Snapshot, same_blob\n"
                       "from gitmem.gitio.snapshots import Snapshot\nfrom gitmem.gitio import restore\n"
                       "import gitmem.gitio.remote\n")
    assert past_the_git_layer(sample) == ["3: gitmem.gitio.snapshots.Snapshot", "4: gitmem.gitio.restore",
                                          "5: gitmem.gitio.remote"]
