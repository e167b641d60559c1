"""The shape of the package, read from its syntax trees (not text search, so `importlib` or `f"GM{n}"` can't
slip by): one git layer, one table of codes, one error map, and no pygit2 object outside the git layer."""
from __future__ import annotations

import ast
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


def tree(path: Path) -> ast.Module:
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


def imported_modules(module: ast.Module) -> Iterator[tuple[int, str]]:
    """(line, module name) of every import, including `importlib.import_module("x")` and `__import__("x")`."""
    for node in ast.walk(module):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.lineno, node.module
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in ("import_module", "__import__") and isinstance(node.args[0].value, str):
                yield node.lineno, node.args[0].value


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
    assert [node.lineno for node in ast.walk(tree(path)) if isinstance(node, ast.Attribute) and node.attr == "raw"] == []


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
