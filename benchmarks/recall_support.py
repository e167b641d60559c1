"""Helpers shared by the recall benchmarks: labelled queries, private copies of synthetic repos, one more cycle."""
from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from gitmem.workspace import Workspace


@dataclass(frozen=True)
class Labelled:
    query: str
    kind: str
    ident: str              # "cycle 12", "L-0003", "D-0007"
    older: str = ""         # for a superseded pair: the entry that must rank below `ident`


QUESTION = "what do we know about the {} and what was done about it?"


def labelled_set(info) -> list[Labelled]:
    def ident(fact) -> str:
        return f"cycle {fact.ref}" if fact.kind == "log" else str(fact.ref)

    found = [Labelled(f.query, f.kind, ident(f)) for f in info.facts]
    found += [Labelled(s.query, "log", ident(s.new), ident(s.old)) for s in info.superseded]
    return found


def config_in_mode(root: Path, mode: str):
    """The repo's config with recall.mode set (the bench_recall figures are BM25's; see bench_recall_semantic)."""
    from dataclasses import replace

    from gitmem.config import load_config

    config = load_config(root)
    return replace(config, recall=replace(config.recall, mode=mode))


def use_model(root: Path, spec: str) -> None:
    """Set recall.model in the copy's gitmem.yaml (round-trip), so every reader of the copy, a fresh process
    included, embeds with `spec` (e.g. `model2vec:DIRECTORY`)."""
    from ruamel.yaml import YAML

    yaml = YAML()
    path = root / "gitmem.yaml"
    data = yaml.load(path.read_text(encoding="utf-8"))
    data.setdefault("recall", {})["model"] = spec
    with path.open("w", encoding="utf-8") as out:
        yaml.dump(data, out)


def light_copy(source: Path, target: Path) -> Path:
    """A repo at `source`'s HEAD whose objects are borrowed, with a copy of the work tree (no .git/gitmem)."""
    import pygit2

    target.mkdir(parents=True)
    for item in source.iterdir():
        if item.name == ".git":
            continue
        (shutil.copytree if item.is_dir() else shutil.copy2)(item, target / item.name)
    repo = pygit2.init_repository(str(target), initial_head="main")
    alternates = Path(repo.path) / "objects" / "info" / "alternates"
    alternates.write_text(str((source / ".git" / "objects").resolve()) + "\n")
    head = pygit2.Repository(str(source)).head.target
    repo = pygit2.Repository(str(target))
    repo.references.create("refs/heads/main", head, force=True)
    repo.index.read_tree(repo[head].peel(pygit2.Commit).tree)
    repo.index.write()
    return target


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


def recall_at_5(results: list[list[tuple[str, str]]], labels: list[Labelled]) -> float:
    good = 0
    for found, label in zip(results, labels, strict=True):
        top = found[:5]
        if (label.kind, label.ident) in top:
            if not label.older or (label.kind, label.older) not in top[:top.index((label.kind, label.ident))]:
                good += 1
    return good / len(labels)


def add_cycle(root: Path, config, number: int) -> None:
    """One more cycle the way the runner writes it: a LOG entry, a NOW block, a commit. The planted facts
    (benchmarks/paraphrase_set.plant) sit in the work tree uncommitted; they are committed first, as a human's
    edit would be, since a writer adds no entry while LOG holds work past HEAD (gitmem.memory_writer)."""
    from datetime import timedelta

    from gitmem.memory import log
    from gitmem.memory_writer import MemoryWriter

    _commit_memory(root, config, "the planted facts")
    last = log.tail((root / config.path("log")).read_text(encoding="utf-8"), 1).entries[-1].when.moment
    memory = MemoryWriter(Workspace.at(root, config), clock=lambda: last + timedelta(hours=1))
    memory.add_log_entry(task=f"benchmark cycle {number}", outcome="built", result=f"appended entry zyzzyva{number}")
    memory.add_now_block(did=f"benchmark cycle {number}", human="nothing", next="more")
    _commit_memory(root, config, f"cycle {number}: benchmark")


def _commit_memory(root: Path, config, message: str) -> None:
    """Commit LOG and NOW as they are in the work tree, when they differ from HEAD."""
    import pygit2

    repo = pygit2.Repository(str(root))
    index = repo.index
    for role in ("log", "now"):
        index.add(config.path(role))
    index.write()
    base = repo.head.peel(pygit2.Commit)
    if index.write_tree() == base.tree.id:
        return
    # Commit times follow the synthetic history (which runs years ahead of the wall clock), as they would in
    # production; a commit older than its parent makes libgit2 walk the whole history.
    signature = pygit2.Signature("bench", "bench@example.com", base.commit_time + 60, 0)
    repo.create_commit("HEAD", signature, signature, message, index.write_tree(), [base.id])
