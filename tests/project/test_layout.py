"""The tests are laid out like the code (issue 35): a folder per package, the hostile and end-to-end tests apart
and marked by their folder, so `pytest tests/close` is the close's loop and `pytest -m "not e2e"` the quick one."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import slow_first

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


class StandIn:
    """What `slow_first` reads of a collected test: its file and whether it is marked slow."""

    def __init__(self, path: str, slow: bool = False) -> None:
        self.path, self.slow = Path(path), slow

    def get_closest_marker(self, name: str) -> object:
        return name if name == "slow" and self.slow else None


def test_the_files_go_out_slow_first_then_by_their_number_of_tests(pytestconfig: pytest.Config) -> None:
    # xdist's own reorder (its default) sorts the files by their number of tests alone, after this order is made:
    # it handed out the benchmarks smoke (3 tests, the suite's longest) 155th of 201 files, near the end.
    assert pytestconfig.getoption("loadscopereorder", default=False) is False
    items = [StandIn("a.py"), StandIn("b.py"), StandIn("b.py"), StandIn("bench.py", slow=True),
             StandIn("c.py"), StandIn("c.py"), StandIn("c.py"), StandIn("month.py", slow=True), StandIn("month.py")]
    slow_first(items)       # type: ignore[arg-type]
    assert [item.path.name for item in items] == ["bench.py", "month.py", "month.py", "c.py", "c.py", "c.py",
                                                  "b.py", "b.py", "a.py"]
