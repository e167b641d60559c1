"""A project's own pytest `norecursedirs` (gitmem.agents.pytest_settings), read from each file pytest takes its
settings from, in pytest's order, and checked against the real pytest's own reading of the same files."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gitmem.agents import bytecode, pytest_settings

CASES = {
    "pytest.ini": ("[pytest]\nnorecursedirs = docs\n    legacy*\n", ("docs", "legacy*")),
    ".pytest.ini": ("[pytest]\nnorecursedirs = docs\n", ("docs",)),
    "pyproject.toml": ('[tool.pytest.ini_options]\nnorecursedirs = ["docs", "legacy*"]\n', ("docs", "legacy*")),
    "tox.ini": ("[tox]\nenvlist = py311\n[pytest]\nnorecursedirs = docs 'with space'\n", ("docs", "with space")),
    "setup.cfg": ("[metadata]\nname = x\n[tool:pytest]\nnorecursedirs = docs\n", ("docs",)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_settings_file_pytest_reads(tmp_path: Path, name: str) -> None:
    text, expected = CASES[name]
    (tmp_path / name).write_text(text, encoding="utf-8")
    assert pytest_settings.norecursedirs(pytest_settings.tree_reader(tmp_path)) == expected


def test_the_first_file_that_is_pytests_is_the_one() -> None:
    """A tox.ini without a [pytest] section is not pytest's: setup.cfg's then counts; a pytest.ini is pytest's
    whatever it holds, and one without the setting leaves the default."""
    files = {"tox.ini": b"[tox]\nenvlist = py311\n", "setup.cfg": b"[tool:pytest]\nnorecursedirs = docs\n"}
    assert pytest_settings.norecursedirs(files.get) == ("docs",)
    assert pytest_settings.norecursedirs({"pytest.ini": b"", **files}.get) is None
    assert pytest_settings.norecursedirs({"pyproject.toml": b"[tool.black]\n", **files}.get) == ("docs",)


def test_a_link_or_a_fifo_in_place_of_the_settings_is_no_settings_file(tmp_path: Path) -> None:
    outside = tmp_path / "outside.ini"
    outside.write_text("[pytest]\nnorecursedirs = docs\n", encoding="utf-8")
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "pytest.ini").symlink_to(outside)
    os.mkfifo(tree / "tox.ini")
    assert pytest_settings.norecursedirs(pytest_settings.tree_reader(tree)) is None


def test_the_sweep_goes_where_pytest_goes_under_the_projects_settings(tmp_path: Path) -> None:
    """The folders the sweep looks into for files pytest runs are those the real pytest collects from, under the
    project's `norecursedirs` (a name pattern and a path pattern), with pytest's default kept as well."""
    (tmp_path / "pytest.ini").write_text("[pytest]\nnorecursedirs = docs* pkg/skipped\n", encoding="utf-8")
    for rel in ("build", ".hidden", "docs", "pkg/skipped", "pkg/kept", "node_modules/x"):
        (tmp_path / rel).mkdir(parents=True)
        name = "test_" + "".join(c if c.isalnum() else "_" for c in rel) + ".py"     # one module name each
        (tmp_path / rel / name).write_text("def test_x():\n    pass\n", encoding="utf-8")
    settings = pytest_settings.norecursedirs(pytest_settings.tree_reader(tmp_path))
    assert settings is not None
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PYTEST"))}
    done = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    pytests = {line.split("::")[0].rsplit("/", 1)[0] for line in done.stdout.splitlines() if "::" in line}
    assert pytests == {"build", ".hidden", "node_modules/x", "pkg/kept"}, done.stdout
    swept = set(os.path.dirname(rel) for rel in bytecode.fresh(tmp_path, 0, [settings]).runnable)
    # what pytest collects, and what the default collects besides (never less than before)
    assert swept == pytests | {"docs", "pkg/skipped"}
    assert set(os.path.dirname(rel) for rel in bytecode.fresh(tmp_path, 0).runnable) == {"docs", "pkg/skipped",
                                                                                          "pkg/kept"}
