"""A project's own pytest `norecursedirs` and `python_files` (gitmem.agents.pytest_settings), read from each file
pytest takes its settings from, in pytest's order, and checked against the real pytest's own reading of the same
files."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gitmem.agents import bytecode, pytest_settings
from gitmem.confined.walk import remove_tree

CASES = {
    "pytest.ini": ("[pytest]\nnorecursedirs = docs\n    legacy*\npython_files = check_*.py\n",
                   ("docs", "legacy*"), ("check_*.py",)),
    ".pytest.ini": ("[pytest]\nnorecursedirs = docs\n", ("docs",), pytest_settings.DEFAULT_PYTHON_FILES),
    "pyproject.toml": ('[tool.pytest.ini_options]\nnorecursedirs = ["docs", "legacy*"]\npython_files = "check_*.py"\n',
                       ("docs", "legacy*"), ("check_*.py",)),
    "tox.ini": ("[tox]\nenvlist = py311\n[pytest]\nnorecursedirs = docs 'with space'\n", ("docs", "with space"),
                pytest_settings.DEFAULT_PYTHON_FILES),
    "setup.cfg": ("[metadata]\nname = x\n[tool:pytest]\npython_files = check_*.py *_check.py\n",
                  pytest_settings.DEFAULT_NORECURSE, ("check_*.py", "*_check.py")),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_settings_file_pytest_reads(tmp_path: Path, name: str) -> None:
    text, norecursedirs, python_files = CASES[name]
    (tmp_path / name).write_text(text, encoding="utf-8")
    assert pytest_settings.project_settings(pytest_settings.tree_reader(tmp_path)) == pytest_settings.PytestSettings(
        norecursedirs, python_files)


def test_the_first_file_that_is_pytests_is_the_one() -> None:
    """A tox.ini without a [pytest] section is not pytest's: setup.cfg's then counts; a pytest.ini is pytest's
    whatever it holds, and one without the setting leaves the default."""
    files = {"tox.ini": b"[tox]\nenvlist = py311\n", "setup.cfg": b"[tool:pytest]\nnorecursedirs = docs\n"}
    assert pytest_settings.project_settings(files.get).norecursedirs == ("docs",)
    assert pytest_settings.project_settings({"pytest.ini": b"", **files}.get) == pytest_settings.PytestSettings()
    assert pytest_settings.project_settings({"pyproject.toml": b"[tool.black]\n", **files}.get).norecursedirs == (
        "docs",)


def test_a_link_or_a_fifo_in_place_of_the_settings_is_no_settings_file(tmp_path: Path) -> None:
    outside = tmp_path / "outside.ini"
    outside.write_text("[pytest]\nnorecursedirs = docs\n", encoding="utf-8")
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "pytest.ini").symlink_to(outside)
    os.mkfifo(tree / "tox.ini")
    assert pytest_settings.project_settings(pytest_settings.tree_reader(tree)) == pytest_settings.PytestSettings()


def test_the_sweep_goes_where_pytest_goes_under_the_projects_settings(tmp_path: Path) -> None:
    """The folders the sweep looks into for files pytest runs are those the real pytest collects from, under the
    project's `norecursedirs` (a name pattern and a path pattern), with pytest's default kept as well."""
    (tmp_path / "pytest.ini").write_text("[pytest]\nnorecursedirs = docs* pkg/skipped\n", encoding="utf-8")
    for rel in ("build", ".hidden", "docs", "pkg/skipped", "pkg/kept", "node_modules/x"):
        (tmp_path / rel).mkdir(parents=True)
        name = "test_" + "".join(c if c.isalnum() else "_" for c in rel) + ".py"     # one module name each
        (tmp_path / rel / name).write_text("def test_x():\n    pass\n", encoding="utf-8")
    settings = pytest_settings.project_settings(pytest_settings.tree_reader(tmp_path))
    pytests = {os.path.dirname(path) for path in _collected(tmp_path)}
    assert pytests == {"build", ".hidden", "node_modules/x", "pkg/kept"}
    swept = set(os.path.dirname(rel) for rel in bytecode.fresh(tmp_path, 0, [settings]).runnable)
    # what pytest collects, and what the default collects besides (never less than before)
    assert swept == pytests | {"docs", "pkg/skipped"}
    assert set(os.path.dirname(rel) for rel in bytecode.fresh(tmp_path, 0).runnable) == {"docs", "pkg/skipped",
                                                                                          "pkg/kept"}


def _collected(top: Path) -> set[str]:
    """The files the real pytest, run at `top`, collects (its `--collect-only` listing)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PYTEST"))}
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
                          cwd=top, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode in (0, 5), done.stdout + done.stderr      # 5: nothing collected
    return {line.split("::")[0] for line in done.stdout.splitlines() if "::" in line}


def test_the_sweep_takes_the_files_pytest_imports_under_the_projects_python_files(tmp_path: Path) -> None:
    """The files the sweep takes are those the real pytest imports, under the project's `python_files` (a name
    pattern and a path pattern) and a doctest file by pytest's default glob, with pytest's default kept as well;
    before, `check_evil.py` was left to run at the human's next pytest."""
    (tmp_path / "pytest.ini").write_text("[pytest]\npython_files = check_*.py lib/*.py\n", encoding="utf-8")
    test = "def test_x():\n    pass\n"
    files = {"check_evil.py": test, "lib/helper.py": test, "src/lib/deep.py": test, "test_default.py": test,
             "src/plain.py": test, "src/check.txt": ">>> 1\n1\n", "src/test_doc.txt": ">>> 1 + 1\n2\n"}
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    pytests = _collected(tmp_path)
    assert pytests == {"check_evil.py", "lib/helper.py", "src/lib/deep.py", "src/test_doc.txt"}
    settings = pytest_settings.project_settings(pytest_settings.tree_reader(tmp_path))
    # what pytest imports, and what the default imports besides (never less than before)
    assert set(bytecode.fresh(tmp_path, 0, [settings]).runnable) == pytests | {"test_default.py"}


def test_the_sweep_takes_what_pytest_runs_where_the_projects_testpaths_start_it(tmp_path: Path) -> None:
    """`testpaths` names where pytest starts: such a folder is collected whatever norecursedirs says (`build/`, a
    virtualenv), such a file is imported or run whatever its name, and the conftest.py of each folder on the way
    runs. The sweep, knowing norecursedirs and python_files only, looked into none of them."""
    (tmp_path / "pytest.ini").write_text("[pytest]\ntestpaths = build/gen venv* tests/check.py doc/**/*.txt\n",
                                         encoding="utf-8")
    test = "def test_x():\n    pass\n"
    ran = tmp_path / "conftest-ran"
    files = {"build/conftest.py": f"open({str(ran)!r}, 'a').write('build')\n", "build/gen/test_gen.py": test,
             "build/other/test_other.py": test, "venvx/pyvenv.cfg": "home = /usr/bin\n", "venvx/test_venv.py": test,
             "tests/check.py": test, "tests/test_unnamed.py": test, "doc/a/notes.txt": ">>> 1 + 1\n2\n"}
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text, encoding="utf-8")
    pytests = _collected(tmp_path)
    assert pytests == {"build/gen/test_gen.py", "venvx/test_venv.py", "tests/check.py", "doc/a/notes.txt"}
    assert ran.read_text(encoding="utf-8") == "build"          # on the way to build/gen
    settings = pytest_settings.project_settings(pytest_settings.tree_reader(tmp_path))
    # what pytest runs, and what the default runs besides (never less than before)
    assert set(bytecode.fresh(tmp_path, 0, [settings]).runnable) == pytests | {"build/conftest.py",
                                                                               "tests/test_unnamed.py"}


def test_a_file_pytest_runs_a_thousand_folders_down_is_found(tmp_path: Path) -> None:
    """The look whether it lies in a virtualenv went up one call a folder: a conftest.py the agent planted 1,100
    folders down ended the sweep, and the cycle, in a RecursionError."""
    bottom = tmp_path
    for _ in range(1100):                  # (os.makedirs recurses too)
        bottom = bottom / "d"
        bottom.mkdir()
    (bottom / "conftest.py").write_text("", encoding="utf-8")
    try:
        assert bytecode.fresh(tmp_path, 0).runnable == ["d/" * 1100 + "conftest.py"]
    finally:
        remove_tree(tmp_path / "d")        # pytest's own clean-up of old temp folders recurses


@pytest.mark.parametrize("addopts", ["--doctest-modules", "-o python_files=*.py", "--override-ini=python_files=*.py",
                                     "--doctest-glob=*.md"])
def test_the_sweep_takes_what_pytest_runs_by_the_projects_addopts(tmp_path: Path, addopts: str) -> None:
    """`addopts` is pytest's command line: `--doctest-modules` makes it import every module it finds, `-o` overrides
    python_files, `--doctest-glob` runs the `>>>` lines of more files; the sweep read none of it."""
    (tmp_path / "pytest.ini").write_text(f"[pytest]\naddopts = {addopts}\n", encoding="utf-8")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "helper.py").write_text('"""\n>>> 1\n1\n"""\ndef test_x():\n    pass\n', encoding="utf-8")
    (tmp_path / "pkg" / "notes.md").write_text(">>> 1 + 1\n2\n", encoding="utf-8")
    pytests = _collected(tmp_path)
    assert pytests == ({"pkg/notes.md"} if "glob" in addopts else {"pkg/helper.py"})
    settings = pytest_settings.project_settings(pytest_settings.tree_reader(tmp_path))
    assert set(bytecode.fresh(tmp_path, 0, [settings]).runnable) == pytests


@pytest.mark.parametrize(("name", "text"), [
    ("pytest.toml", '[pytest]\npython_files = ["check_*.py"]\nnorecursedirs = ["docs"]\n'),
    (".pytest.toml", '[pytest]\npython_files = ["check_*.py"]\nnorecursedirs = ["docs"]\n'),
    ("pyproject.toml", '[project]\nname = "x"\n[tool.pytest]\npython_files = ["check_*.py"]\n'
                       'norecursedirs = ["docs"]\n'),
])
def test_pytest_9s_own_toml_settings_are_read_as_pytest_reads_them(tmp_path: Path, name: str, text: str) -> None:
    """pytest 9 reads `pytest.toml`, `.pytest.toml` and pyproject's `[tool.pytest]` (TOML's types) before any ini
    file: under them the real pytest imports `build/check_evil.py`, and so the sweep takes it."""
    (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "tox.ini").write_text("[pytest]\nnorecursedirs = build\n", encoding="utf-8")   # pytest's after it
    for rel in ("build/check_evil.py", "pkg/check_x.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("def test_x():\n    pass\n", encoding="utf-8")
    settings = pytest_settings.project_settings(pytest_settings.tree_reader(tmp_path))
    assert (settings.python_files, settings.norecursedirs) == (("check_*.py",), ("docs",))
    collected = _collected(tmp_path)
    assert collected == {"build/check_evil.py", "pkg/check_x.py"}, "the real pytest imports both"
    assert collected <= set(bytecode.fresh(tmp_path, 0, [settings]).runnable)
