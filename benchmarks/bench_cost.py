"""Whole-process cost at 1x, 10x and 100x (issue 31): a no-op scheduled cycle, the daily close, a bm25
recall in a new process with a warm index, and the first cycle under rules 6, which seals the old history.
CPU time and peak memory of the real `gitmem` process, measured by the kernel (`wait4`, git's child processes
included), and the largest steps of each under cProfile (the three gitmem functions holding the most of the
process's time, callees included, entry points left out).

Each path runs in a private copy of the cached synthetic repository (tests.support.synth), set up as a
scheduled agent's machine finds it (see `ready`): the `command` backend with a no-op agent (`true`),
everything pushed (a remote-tracking `origin/main` at HEAD). A close runs once per copy (a second one changes
nothing).

Run:  GITMEM_BENCH_SCALES=1,10,100 .venv/bin/pytest benchmarks/bench_cost.py -s --no-cov -p no:cacheprovider
or    .venv/bin/python -m benchmarks.bench_cost 1 10 100      (prints the table; GITMEM_BENCH_PYTHON picks the
      interpreter that runs gitmem, so an older checkout's venv measures "before"; arguments naming paths, as in
      `... bench_cost 1 100 close`, measure only those; `live=300,50` measures a what-if, below; `sealed` seals
      LOG into volumes first, as rules 6 does)

What-if `live=E,B` (issue 31's open question: what a format that keeps LOG and NOW small would cost): before the
measured run, one commit cuts LOG to its last E entries and NOW to its top B blocks (committed without hooks:
the cut is no format gitmem accepts today, so history would not verify; the cycle judges only its own change).
It measures what a live LOG of about a month and a short NOW would cost at each scale, the rest of the
repository (DECISIONS, LESSONS, 100,000 commits) as it is.
"""
from __future__ import annotations

import os
import pstats
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pygit2
import pytest

from benchmarks.conftest import SCALES, scale_id
from tests.support.helpers import with_command_backend
from tests.support.synth import cached_repo, default_cache_dir
from tests.support.synth_copy import working_copy

PATHS = ("cycle", "close", "recall", "seal")
QUERY = "sitemap walrus slug underscores"


@dataclass(frozen=True)
class Cost:
    cpu: float            # seconds, user + system
    peak_mib: float
    exit_code: int


def gitmem_python() -> str:
    return os.environ.get("GITMEM_BENCH_PYTHON", sys.executable)


def command(path: str) -> list[str]:
    return {"cycle": ["cycle", "--agent", "command"], "seal": ["cycle", "--agent", "command"], "close": ["close"],
            "status": ["status"], "recall": ["recall", "--mode", "bm25", QUERY]}[path]


def prepared(scale: float, home: Path) -> Path:
    """A copy with the no-op command agent committed and everything pushed (and the what-if cut, when asked)."""
    root = working_copy(cached_repo(scale), home / "repo")
    config = root / "gitmem.yaml"
    config.write_text(with_command_backend(config.read_text(encoding="utf-8"), "true"), encoding="utf-8")
    env = {**os.environ, "GIT_AUTHOR_NAME": "Dana Human", "GIT_AUTHOR_EMAIL": "dana@example.com",
           "GIT_COMMITTER_NAME": "Dana Human", "GIT_COMMITTER_EMAIL": "dana@example.com"}
    subprocess.run(["git", "commit", "-qm", "a no-op command agent", "gitmem.yaml"], cwd=root, env=env, check=True)
    if LIVE is not None:
        _cut(root / "LOG.md", LIVE[0], keep_first=False)
        _cut(root / "NOW.md", LIVE[1], keep_first=True)
        subprocess.run(["git", "commit", "-qm", "what-if: LOG and NOW cut", "--no-verify", "LOG.md", "NOW.md"],
                       cwd=root, env=env, check=True)
    if SEALED:       # in a child: the kernel counts the image a child was forked from in its peak (ru_maxrss)
        subprocess.run([sys.executable, "-c", "import sys; from pathlib import Path; from tests.support.sealing "
                        "import seal_committed; seal_committed(Path(sys.argv[1]))", str(root)],
                       cwd=Path(__file__).resolve().parents[1], check=True)
    repo = pygit2.Repository(str(root))
    repo.references.create("refs/remotes/origin/main", repo.head.target, force=True)
    return root


LIVE: tuple[int, int] | None = None      # the what-if: (LOG entries, NOW blocks) kept
# `sealed` (or GITMEM_BENCH_SEALED=1): LOG sealed into volumes (rules 6) before the measured run, as the first
# cycle under rules 6 leaves an old LOG (tests.support.sealing.seal_committed).
SEALED = bool(os.environ.get("GITMEM_BENCH_SEALED"))


def _cut(path: Path, keep: int, *, keep_first: bool) -> None:
    """Keep the text above the first `## ` heading and `keep` sections: the first ones (NOW's newest, on top) or
    the last ones (LOG's newest, at the end)."""
    text = path.read_text(encoding="utf-8")
    starts = [match.start() for match in re.finditer(r"^## ", text, re.M)]
    if len(starts) <= keep:
        return
    head = text[:starts[0]] if starts else text
    path.write_text(text[:starts[keep]] if keep_first else head + text[starts[-keep]:], encoding="utf-8")


def run(root: Path, path: str, *, profile: Path | None = None) -> Cost:
    """One new process; its CPU time and peak RSS as the kernel counted them."""
    argv = [gitmem_python()] + (["-m", "cProfile", "-o", str(profile)] if profile else []) + \
        ["-m", "gitmem", *command(path)]
    with open(os.devnull, "wb") as sink:
        child = subprocess.Popen(argv, cwd=root, stdout=sink, stderr=subprocess.PIPE)
        assert child.stderr is not None
        err = child.stderr.read()
        _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode not in (0,) and path != "close":
        raise AssertionError(f"{path} exited {child.returncode}: {err.decode(errors='replace')[-2000:]}")
    return Cost(usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, child.returncode)


def largest_step(profile: Path) -> str:
    """The gitmem functions that hold the most of the process's time (their callees included), leaving out
    the command's own frame and those that hold nearly all of it (the entry points): the three largest, with
    their share and how often they ran."""
    stats = pstats.Stats(str(profile))
    table = stats.stats  # type: ignore[attr-defined]
    total = max((row[3] for row in table.values()), default=1.0) or 1.0
    mine = sorted(((row[3], row[1], key) for key, row in table.items()
                   if "gitmem/" in key[0] and "gitmem/cli/" not in key[0] and row[3] < 0.6 * total), reverse=True)
    named = []
    for spent, calls, (file, _, name) in mine[:3]:
        module = file.rsplit("gitmem/", 1)[-1].removesuffix(".py").replace("/", ".")
        named.append(f"{module}.{name} {spent / total:.0%} x{calls}")
    return "; ".join(named) or "-"


def ready(scale: float, home: Path, path: str) -> Path:
    """A copy as the path finds it on a scheduled agent's machine. Recall: its index built and checked once.
    Cycle and close: the cycle before it run and pushed (the remote-tracking branch moves to it, as `gitmem cycle
    --push` leaves it); that first cycle under rules 6 seals the synthetic history (LOG into `history/` volumes,
    NOW to its newest blocks: the upgrade), so what is measured is the steady state. Close: also the history
    verdicts of the confirmations cached (.git/gitmem, and the verdicts kept outside the repository:
    gitmem.close.verdict_memo), as earlier closes and `gitmem status` leave them, and what an earlier close keeps
    of the sealed volumes it read (a close run and taken back: `_close_undone`); `GITMEM_BENCH_COLD_CLOSE=1`
    measures the first close ever instead. Seal: the copy as the new gitmem finds it, never sealed: what is
    measured is that first, upgrading cycle (a one-time cost). Close and seal: the index's stat data fresh, as
    the last cycle's commit leaves it (gitio.commit_files): a copy checked out and used at once holds racily
    clean entries, and every status would hash the 75 MB LOG again (about 190 ms at 100x), which no scheduled
    run does."""
    shutil.rmtree(home / "repo", ignore_errors=True)
    root = prepared(scale, home)
    if path in ("recall", "cycle", "close"):
        run(root, "recall" if path == "recall" else "cycle")
        if path == "recall":
            run(root, path)          # the first process after a build checks the index and keeps its proofs
        repo = pygit2.Repository(str(root))
        repo.references.create("refs/remotes/origin/main", repo.head.target, force=True)
    if path == "close" and not os.environ.get("GITMEM_BENCH_COLD_CLOSE"):
        run(root, "status")
        _close_undone(root)
    if path in ("close", "seal"):
        subprocess.run(["git", "update-index", "-q", "--refresh"], cwd=root, check=False)
    return root


def _close_undone(root: Path) -> None:
    """A close run and its commit taken back: what it keeps outside the repository stays (gitmem.workspace.proofs:
    what it read of the sealed volumes, by blob id), as yesterday's close leaves it for today's."""
    repo = pygit2.Repository(str(root))
    head = str(repo.head.target)
    run(root, "close")
    subprocess.run(["git", "reset", "-q", "--hard", head], cwd=root, check=True)
    repo.references.create("refs/remotes/origin/main", repo.head.target, force=True)


def measure(scale: float, path: str, rounds: int = 1) -> tuple[Cost, str]:
    home = Path(tempfile.mkdtemp(prefix=f"cost-{scale_id(scale)}-", dir=default_cache_dir()))
    try:
        root = ready(scale, home, path)
        costs = []
        once = path in ("close", "seal")      # a second run in the same copy changes nothing
        for _ in range(rounds):
            if once and costs:
                root = ready(scale, home, path)
            costs.append(run(root, path))
        if once:
            root = ready(scale, home, path)
        elif path == "cycle":          # the cycle measured was pushed too: the profiled one finds it so
            repo = pygit2.Repository(str(root))
            repo.references.create("refs/remotes/origin/main", repo.head.target, force=True)
        step = largest_step_of(root, path, home)
        return min(costs, key=lambda c: c.cpu), step
    finally:
        shutil.rmtree(home, ignore_errors=True)


def largest_step_of(root: Path, path: str, home: Path) -> str:
    profile = home / f"{path}.prof"
    run(root, path, profile=profile)
    return largest_step(profile)


def table(scales: Sequence[float], paths: Sequence[str] = PATHS) -> list[str]:
    lines = []
    base: dict[str, float] = {}
    for path in paths:
        for scale in scales:
            cost, step = measure(scale, path)
            base.setdefault(path, cost.cpu)
            lines.append(f"{path:<7}{scale_id(scale):>5}  cpu {cost.cpu * 1000:8.0f} ms  {cost.cpu / base[path]:6.2f}x"
                         f"  peak {cost.peak_mib:6.0f} MiB  exit {cost.exit_code}  largest step: {step}")
            print(lines[-1], flush=True)
    return lines


@pytest.mark.parametrize("path", PATHS)
def test_cost(path: str) -> None:
    """The table's rows for one path, at the configured scales (first scale is the base of the ratio)."""
    print()
    base = None
    for scale in SCALES:
        cost, step = measure(scale, path)
        base = base or cost.cpu
        print(f"{path} {scale_id(scale)}: cpu {cost.cpu * 1000:.0f} ms ({cost.cpu / base:.2f}x), "
              f"peak {cost.peak_mib:.0f} MiB, exit {cost.exit_code}, largest step: {step}")
        if path == "close":
            assert cost.exit_code == 0, f"the close failed at {scale_id(scale)}"


if __name__ == "__main__":
    asked = [arg for arg in sys.argv[1:] if arg in PATHS]
    live = [arg.removeprefix("live=") for arg in sys.argv[1:] if arg.startswith("live=")]
    if live:
        entries, blocks = live[0].split(",")
        LIVE = (int(entries), int(blocks))
    SEALED = SEALED or "sealed" in sys.argv[1:]
    scales = [float(arg) for arg in sys.argv[1:] if arg not in (*PATHS, "sealed") and not arg.startswith("live=")]
    table(scales or list(SCALES), asked or PATHS)
