"""Synthetic memory repositories at any scale, for benchmarks and scale tests.

`build_synthetic_repo(path, scale=k, seed=s)` builds a valid gitmem repo whose final files are a real agent's
memory at k times its size (k=1: a 13,265-line LOG, 480 cycles, 1,000 commits, ~40 decisions, ~30 lessons,
RULES.md of 189 lines with 18 proven and 4 retired rules), deterministic for a seed, and returns `SynthInfo`
with the planted facts (query words -> the entry that answers them) and the superseded-fact pairs.

Design: history has to stay cheap at 100x (1.3M LOG lines, 100,000 commits), so no commit stores a fresh
full-size LOG blob except where a benchmark needs it:
- one initial commit by the human with the template;
- the bulk of history (all but the last 60 cycles) lands in ~20 large agent commits, each appending a chunk
  of LOG entries and NOW blocks and adding the decisions, lessons and rules of that period; after each, a
  human commit answers the decisions of that chunk (so GM207 holds: the agent never resolves);
- filler agent commits between them touch only `work/notes.md`, bringing the total to 1,000*k commits;
- the last ~60 cycles (plus their daily closes) are one commit each: append one LOG entry and prepend one
  NOW block, exactly what `gitmem check` and `gitmem verify` see in production.
Memory-file blobs go into one packfile written directly (`tests.support.synth.pack`): the newest LOG and NOW are
stored whole and each older version is a copy-only delta against them, as `git gc` would store them.
Trees and commits are built with pygit2 (TreeBuilder, create_commit) without a work tree, through an
in-memory object backend that is packed at the end (libgit2's loose writes cost ~0.3 ms each, and 100x makes
300,000 of them); the final tree is checked out at the end. Timestamps end on 2026-11-01 (synth.plan.END): a cycle every
3 hours, a daily close at 23:50 UTC. Measured on a shared 2-core machine: 1x ~3 s, 10x ~14 s, 100x ~50 s CPU.

`cached_repo(scale, seed)` builds once per (scale, seed, GENERATOR_VERSION) under $GITMEM_BENCH_CACHE
(default `.bench-cache/` at the project root) and reuses it.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from tests.support.synth.plan import Plan, make_plan
from tests.support.synth.state import State, make_state
from tests.support.untraced import untraced_environ

GENERATOR_VERSION = 5
PROJECT_ROOT = Path(__file__).resolve().parents[3]
HUMAN = ("Dana Reviewer", "dana@example.org")
TEMPLATE_FILES = ("NOW.md", "DECISIONS.md", "LOG.md", "LESSONS.md", "RULES.md", "ROADMAP.md", "gitmem.yaml",
                  ".pre-commit-config.yaml", "prompts/cycle.md", "prompts/close.md")


@dataclass(frozen=True)
class PlantedFact:
    """A recall target: `query` words should find the entry of `kind` named by `ref` (a cycle or an ID)."""

    query: str
    kind: str             # log | lesson | decision
    ref: str | int        # cycle number for log entries, `L-0007` / `D-0012` otherwise
    path: str
    line: int


@dataclass(frozen=True)
class Supersession:
    """An older LOG entry states a fact; a newer one replaces it. Recall should prefer `new`."""

    query: str
    old: PlantedFact
    new: PlantedFact


@dataclass
class SynthInfo:
    path: str
    scale: float
    seed: int
    version: int
    cycles: int
    log_lines: int
    commits: int
    head: str
    decisions_pending: int
    decisions_resolved: int
    lessons: int
    proven_rules: int
    retired_rules: int
    facts: list[PlantedFact] = field(default_factory=list)
    superseded: list[Supersession] = field(default_factory=list)
    seconds: float = 0.0

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=1)

    @classmethod
    def from_json(cls, text: str) -> SynthInfo:
        data = json.loads(text)
        data["facts"] = [PlantedFact(**f) for f in data["facts"]]
        data["superseded"] = [Supersession(s["query"], PlantedFact(**s["old"]), PlantedFact(**s["new"]))
                              for s in data["superseded"]]
        return cls(**data)


def _templates() -> dict[str, str]:
    from gitmem.scaffold.init import template_dir

    root = template_dir()
    return {name: (root / name).read_text(encoding="utf-8") for name in TEMPLATE_FILES}


def roadmap_text(plan: Plan, upto: int) -> bytes:
    """A month per section; past months done, the current one half done and marked (current)."""
    last = plan.entries[max(0, upto - 1)].when
    months = (last - plan.entries[0].when).days // 30
    lines = ["# ROADMAP", "<!-- The current section is the first one marked (current) or holding an open "
             "`- [ ]` item. -->"]
    for month in range(months + 1):
        current = month == months
        lines += ["", f"## Month {month + 1}" + (" (current)" if current else "")]
        for item in range(4):
            done = not current or item < 2
            lines.append(f"- [{'x' if done else ' '}] milestone {month + 1}.{item + 1}: "
                         f"{['search', 'billing', 'newsletter', 'docs'][item]} improvements")
    return ("\n".join(lines) + "\n").encode()


def build_synthetic_repo(path: str | Path, *, scale: float = 1.0, seed: int = 0) -> SynthInfo:
    """Build the repository in `path` (created; must be empty or absent). See the module docstring."""
    from tests.support.synth.build import build

    started = time.monotonic()
    target = Path(path)
    if target.exists() and any(target.iterdir()):
        raise FileExistsError(f"{target} is not empty")
    plan = make_plan(scale, seed)
    templates = _templates()
    state: State = make_state(plan, templates, HUMAN)
    head, commits = build(target, plan, state, templates, HUMAN, roadmap_text)
    info = _info(target, plan, state, head, commits)
    info.seconds = round(time.monotonic() - started, 2)
    return info


def _info(target: Path, plan: Plan, state: State, head: str, commits: int) -> SynthInfo:
    from gitmem.memory import decisions, lessons, rules

    files = {name: (target / name).read_text(encoding="utf-8") for name in ("DECISIONS.md", "LESSONS.md", "RULES.md")}
    decision_doc = decisions.parse(files["DECISIONS.md"])
    lesson_doc = lessons.parse(files["LESSONS.md"])
    rule_doc = rules.parse(files["RULES.md"])
    lines: dict[tuple[str, str | int], int] = {("decision", d.id): d.line for d in decision_doc.all}
    lines |= {("lesson", lesson.id): lesson.line for lesson in lesson_doc.lessons}
    lines |= {("log", e.cycle): e.line for e in plan.entries if e.cycle is not None}
    paths = {"log": "LOG.md", "lesson": "LESSONS.md", "decision": "DECISIONS.md"}
    facts = [PlantedFact(p.query, p.kind, p.ref, paths[p.kind], lines[(p.kind, p.ref)]) for p in plan.facts]
    superseded = [Supersession(query, PlantedFact(query, "log", old, "LOG.md", lines[("log", old)]),
                               PlantedFact(query, "log", new, "LOG.md", lines[("log", new)]))
                  for query, old, new in plan.superseded]
    with open(target / "LOG.md", "rb") as handle:
        log_lines = sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 20), b""))
    return SynthInfo(str(target), plan.scale, plan.seed, GENERATOR_VERSION, plan.cycles, log_lines, commits, head,
                     len(decision_doc.pending), len(decision_doc.resolved), len(lesson_doc.lessons),
                     len(rule_doc.proven), len(rule_doc.retired), facts, superseded)


def default_cache_dir() -> Path:
    env = os.environ.get("GITMEM_BENCH_CACHE")
    return Path(env) if env else PROJECT_ROOT / ".bench-cache"


def cached_repo(scale: float, seed: int = 0, cache_dir: str | Path | None = None) -> SynthInfo:
    """The synthetic repo for (scale, seed), built on first use. Treat it as read-only: copy before writing."""
    root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    key = f"synth-v{GENERATOR_VERSION}-scale{scale:g}-seed{seed}"
    home = root / key
    info_file = home / "info.json"
    if info_file.exists():
        info = SynthInfo.from_json(info_file.read_text(encoding="utf-8"))
        info.path = str(home / "repo")
        return info
    building = root / f".{key}.{os.getpid()}.tmp"
    shutil.rmtree(building, ignore_errors=True)
    building.mkdir(parents=True)
    build_apart(building, scale, seed)
    try:
        os.replace(building, home)            # atomic: a half-built repo is never seen as cached
    except OSError:                           # another process finished first
        shutil.rmtree(building, ignore_errors=True)
    return cached_repo(scale, seed, root)


def build_into(building: str | Path, scale: float, seed: int) -> None:
    """Build the repo for (scale, seed) at `building`/repo, with its `info.json` beside it."""
    info = build_synthetic_repo(Path(building) / "repo", scale=scale, seed=seed)
    (Path(building) / "info.json").write_text(info.to_json(), encoding="utf-8")


def build_apart(building: Path, scale: float, seed: int) -> None:
    """`build_into` in a child process that coverage does not trace: the repo is the suite's scaffolding, not what
    it measures, and under the test run's tracer a build takes about 40% more CPU (10x: 5.2 s against 3.7 s; a
    100x build is about a minute). The result is the same repo: the build is deterministic for (scale, seed)."""
    env = untraced_environ()
    call = f"from tests.support.synth import build_into; build_into({str(building)!r}, {scale!r}, {seed!r})"
    done = subprocess.run([sys.executable, "-c", call], cwd=PROJECT_ROOT, env=env, capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        raise RuntimeError(f"building the synthetic repo {building.name} failed:\n{done.stdout}{done.stderr}")
