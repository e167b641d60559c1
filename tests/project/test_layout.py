"""The tests are laid out like the code (issue 35): a folder per package, the hostile and end-to-end tests apart
and marked by their folder, so `pytest tests/close` is the close's loop and `pytest -m "not e2e"` the quick one."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
NOT_TESTS = {"support", "fixtures", "__pycache__"}


def test_no_test_file_sits_flat_in_tests() -> None:
    assert sorted(p.name for p in TESTS.glob("test_*.py")) == []


def test_every_test_folder_is_a_package() -> None:
    """tests/ is a package, and so is each folder: two files of one name in two folders stay two modules."""
    folders = [p for p in TESTS.iterdir() if p.is_dir() and p.name not in NOT_TESTS]
    assert len(folders) > 10
    assert [p.name for p in folders if not (p / "__init__.py").is_file()] == []
    assert [p.name for p in folders if not any(p.glob("test_*.py"))] == []


def collected(*args: str) -> list[str]:
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-o", "addopts=", "-q",
                           "--collect-only", *args], cwd=TESTS.parent, capture_output=True, text=True, timeout=300)
    return sorted({line.split("::")[0] for line in done.stdout.splitlines() if "::" in line})


def test_the_folder_gives_the_e2e_and_hostile_markers() -> None:
    files = ["tests/e2e/test_hooks_precommit.py", "tests/hostile/test_hostile_grammar.py",
             "tests/cli/test_cli_undecodable.py"]
    assert collected("-m", "e2e", *files) == ["tests/e2e/test_hooks_precommit.py"]
    assert collected("-m", "hostile", *files) == ["tests/hostile/test_hostile_grammar.py"]
    assert collected("-m", "not e2e and not hostile", *files) == ["tests/cli/test_cli_undecodable.py"]
