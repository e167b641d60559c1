"""`gitmem check` on adversarial lines (issue 11, class 6): every regex on the hook path is linear-time.

Each case stages one hostile line in a memory file of a fresh template repository and times `check_staged`
in-process, at 32 KB and at 1 MB: a linear check takes about 30 times longer on the bigger line, a quadratic one
about 1000 times (before the fix, 32,000 spaces in a heading took 4 s and 1 MB about an hour). The last group
times the whole `gitmem check` process on the worst 1 MB case.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gitmem.checks.check_and_verify import check_staged
from gitmem.workspace import Workspace
from tests.support.helpers import make_repo

TS = "2026-11-30 10:00 UTC"
SIZES = {"32KB": 32_000, "1MB": 1_000_000}
# name -> (file, the appended text for a line of about n characters)
SHAPES = {
    "log-heading-spaces": ("LOG.md", lambda n: f"\n## {TS}" + " " * n + "x\n- Task: t\n- Result: r\n"),
    "log-heading-dashes": ("LOG.md", lambda n: f"\n## {TS}" + " -" * (n // 2) + "\n- Task: t\n- Result: r\n"),
    "log-heading-separators": ("LOG.md", lambda n: f"\n## {TS} " + "· " * (n // 2) + "\n"),
    "log-cycle-digits": ("LOG.md", lambda n: f"\n## {TS} · cycle " + "1" * n + " · built\n"),
    "log-field-key": ("LOG.md", lambda n: f"\n## {TS} · cycle 9 · built\n- " + "A" * n + ":\n- Result: r\n"),
    "now-heading-spaces": ("NOW.md", lambda n: f"\n## {TS}" + " " * n + "cycle 1\n"),
    "decision-heading-spaces": ("DECISIONS.md", lambda n: "\n### D-0001" + " " * n + "x\n"),
    "decision-answered-by": ("DECISIONS.md", lambda n: f"\n### D-0001 · t\n- Answered: {TS}" + " by x" * (n // 5)
                             + "\n"),
    "lesson-heading-spaces": ("LESSONS.md", lambda n: "\n## L-0001" + " " * n + "x\n"),
    "rule-parens": ("RULES.md", lambda n: "\n- R-01 · " + "x (" * (n // 3) + "\n"),
    "rule-cycles": ("RULES.md", lambda n: "\n- R-01 · x (from L-0001; cycles " + "1, " * (n // 3) + "x)\n"),
    "fences-many": ("LOG.md", lambda n: f"\n## {TS} · cycle 9 · built\n- Task: t\n- Result: r\n" + "```\n" * (n // 4)),
    "secret-prefixes": ("LOG.md", lambda n: f"\n## {TS} · cycle 9 · built\n- Task: " + "sk-ant-" * (n // 7) + "\n"),
}


@pytest.fixture(scope="module")
def repos(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Path]:
    """One staged repository per (shape, size)."""
    made: dict[tuple[str, str], Path] = {}
    for shape, (path, line) in SHAPES.items():
        for size_id, size in SIZES.items():
            repo = make_repo(tmp_path_factory.mktemp(f"{shape}-{size_id}") / "repo")
            repo.stage_files({path: repo.read(path) + line(size)})
            made[shape, size_id] = repo.path
    return made


@pytest.mark.benchmark(group="adversarial: check_staged on one hostile line")
@pytest.mark.parametrize("size_id", sorted(SIZES))
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_check_on_a_hostile_line(benchmark, repos: dict[tuple[str, str], Path], shape: str, size_id: str) -> None:
    root = repos[shape, size_id]
    found = benchmark.pedantic(lambda: check_staged(Workspace.open(root)), rounds=3, iterations=1)
    assert all(len(v.message) <= 300 for v in found)


@pytest.mark.benchmark(group="adversarial: the whole `gitmem check` process on a 1 MB heading")
def test_check_process_on_a_megabyte_heading(benchmark, repos: dict[tuple[str, str], Path]) -> None:
    root = repos["log-heading-spaces", "1MB"]

    def run() -> int:
        return subprocess.run([sys.executable, "-m", "gitmem", "check"], cwd=root, capture_output=True).returncode

    assert benchmark.pedantic(run, rounds=3, iterations=1) == 1
