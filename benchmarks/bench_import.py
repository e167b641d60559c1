"""`gitmem import codex --dry-run` of a large Codex memory, as a whole process (acceptance rehearsal, round 6).

Codex keeps every stage-1 memory merged in one `raw_memories.md`; one of 490 KB, under the import's 512 KiB bound,
holds 20,000 one-line bullets. Each lands as a lesson, so the plan, the batch's judgement against Pending and its
display go over 20,000 facts. They once did so again for every fact (the next lesson number, where each step
lands, the environment's secret values): 20,000 facts took about 3 minutes, 2,000 about 2 s beyond start-up.

Run:  .venv/bin/pytest benchmarks/bench_import.py --benchmark-only -s
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.helpers import make_repo

GITMEM = Path(sys.executable).parent / "gitmem"


@pytest.mark.parametrize("facts", [2_000, 20_000])
@pytest.mark.benchmark(group="import: `gitmem import codex --dry-run` of one raw_memories.md, whole process")
def test_import_a_large_codex_memory(benchmark, tmp_path: Path, facts: int) -> None:
    repo = make_repo(tmp_path / "repo")
    memories = tmp_path / "codex" / "memories"
    memories.mkdir(parents=True)
    text = "".join(f"- m{n} rerun it\n" for n in range(facts))
    assert len(text) < 512 * 1024          # within the import's bound for one file
    (memories / "raw_memories.md").write_text(text, encoding="utf-8")
    env = {**os.environ, "CODEX_HOME": str(tmp_path / "codex"), "HOME": str(tmp_path)}

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(GITMEM), "import", "codex", "--dry-run"], cwd=repo.path, env=env,
                              capture_output=True, text=True)

    done = benchmark.pedantic(run, rounds=1, iterations=1)
    assert done.returncode in (0, 1), done.stderr           # 1: the batch's decision does not fit Pending (GM954)
    landed = done.stdout.count("would land in LESSONS")
    benchmark.extra_info.update(facts=landed)
    if benchmark.stats is not None:          # None when the smoke test runs it with --benchmark-disable
        print(f"\n{landed} facts: {benchmark.stats.stats.max:.1f} s")
    assert landed == facts


# Shapes of a memory file an agent may write, near the 512 KiB bound, that cost a scan of its `@path` imports the
# most: backtick runs of every length, none closed (a regular expression that searched each one's closer to its
# paragraph's end took 4 s on 180 KB), and an import every few bytes (counting each one's line from the top took
# 2.6 s on 40,000, growing with the square). One pass over the runs and lines counted on: 30 ms, 350 ms, 430 ms.
HOSTILE_IMPORTS = {
    "unclosed-backtick-runs": "".join("`" * k + "a" for k in range(1, 1000)),
    "an-import-every-6-bytes": "@a.md " * 85_000,
    "comments-and-spans": "<!--`a`" * 70_000,
}


@pytest.mark.parametrize("shape", sorted(HOSTILE_IMPORTS))
@pytest.mark.benchmark(group="import: the `@path` imports of a hostile memory file near 512 KiB (at_imports)")
def test_find_the_imports_of_a_hostile_memory_file(benchmark, shape: str) -> None:
    from gitmem.interop.at_imports import at_imports

    text = HOSTILE_IMPORTS[shape]
    assert len(text) <= 512 * 1024
    found = benchmark(at_imports, text)
    benchmark.extra_info.update(imports=len(found))
