"""Turn a synthetic history plan into a git repository: blobs into one pack, trees and commits with pygit2.

Pass 1 walks the commit schedule and records, per commit, the blob of each file it changes (adding blobs to
the pack; older LOG/NOW versions as copy-deltas of the newest). Pass 2 creates the trees and commits.
"""
from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from gitmem.config import Config
from tests.support.synth.pack import PackWriter
from tests.support.synth.plan import Plan
from tests.support.synth.state import State, decisions_text, lessons_text, rules_text
from tests.support.synth.text import TOPICS, TextGen

NOTES = "work/notes.md"


@dataclass
class CommitSpec:
    human: bool
    when: datetime
    message: str
    files: dict[str, bytes] = field(default_factory=dict)    # path -> raw blob id


class _Versions:
    """Blob ids of LOG and NOW as they stand after the first `b` entries, without building the text."""

    def __init__(self, plan: Plan, pack: PackWriter, templates: dict[str, str]) -> None:
        self.pack = pack
        self.log_head = templates["LOG.md"].encode()
        self.now_template = templates["NOW.md"].encode()
        self.now_head = (templates["NOW.md"].rstrip("\n") + "\n\n").encode()
        pieces = [(e.block + ("\n\n" if e.index else "\n")).encode() for e in plan.entries]
        self.log = self.log_head + b"".join(e.log_bytes for e in plan.entries)
        self.now = self.now_head + b"".join(reversed(pieces))
        self.log_cum, self.now_cum = [len(self.log_head)], [0]
        for entry, piece in zip(plan.entries, pieces, strict=True):
            self.log_cum.append(self.log_cum[-1] + len(entry.log_bytes))
            self.now_cum.append(self.now_cum[-1] + len(piece))
        self.log_oid = pack.add_blob(self.log)
        self.now_oid = pack.add_blob(self.now)

    def log_at(self, b: int) -> bytes:
        return self.pack.add_copy_delta(self.log_oid, self.log, [(0, self.log_cum[b])])

    def now_at(self, b: int) -> bytes:
        if b == 0:
            return self.pack.add_blob(self.now_template)
        tail = self.now_cum[b]
        return self.pack.add_copy_delta(self.now_oid, self.now, [(0, len(self.now_head)),
                                                                 (len(self.now) - tail, tail)])


def _schedule(plan: Plan, state: State, templates: dict[str, str], pack: PackWriter,
              roadmap: Callable[[Plan, int], bytes]) -> list[CommitSpec]:
    versions = _Versions(plan, pack, templates)
    rng = random.Random(f"{plan.seed}:notes")
    text = TextGen(rng)
    note_pool = [text.line(topic) for topic in TOPICS for _ in range(40)]
    notes: list[str] = []
    first = CommitSpec(True, plan.start - timedelta(days=1), "Start memory from the gitmem template")
    first.files = {name: pack.add_blob(body.encode()) for name, body in templates.items()}
    first.files[NOTES] = pack.add_blob(b"# Notes\n")
    specs = [first]
    answered = {d.answer_commit for d in state.decisions if d.answer_commit is not None}
    recent = len(plan.entries) - plan.recent_start
    fillers = max(0, plan.commits - 1 - len(plan.chunks) - len(answered) - recent)
    current: dict[str, bytes] = dict(first.files)

    def add(spec: CommitSpec, files: dict[str, bytes]) -> None:
        spec.files = {path: oid for path, oid in files.items() if current.get(path) != oid}
        current.update(spec.files)
        specs.append(spec)

    start = 0
    for j, end in enumerate(plan.chunks):
        last = specs[-1].when
        chunk_time = plan.entries[end - 1].when + timedelta(minutes=5)
        count = fillers * (j + 1) // len(plan.chunks) - fillers * j // len(plan.chunks)
        for n in range(count):
            notes = [*notes[-5:], rng.choice(note_pool)]
            when = last + (chunk_time - last) * (n + 1) / (count + 1)
            body = "# Notes\n\n" + "".join(f"- {line}\n" for line in notes)
            add(CommitSpec(False, when, f"notes: {notes[-1]}"), {NOTES: pack.add_blob(body.encode())})
        cycles = [e.cycle for e in plan.entries[start:end] if e.cycle is not None]
        add(CommitSpec(False, chunk_time, f"memory: cycles {cycles[0]}-{cycles[-1]}" if cycles else "memory: close"),
            {"LOG.md": versions.log_at(end), "NOW.md": versions.now_at(end),
             "DECISIONS.md": pack.add_blob(decisions_text(state, end, j)),
             "LESSONS.md": pack.add_blob(lessons_text(state, end)),
             "RULES.md": pack.add_blob(rules_text(state, end)), "ROADMAP.md": pack.add_blob(roadmap(plan, end))})
        if j in answered:
            ids = [d.pending.id for d in state.decisions if d.answer_commit == j]
            add(CommitSpec(True, chunk_time + timedelta(minutes=20), f"decisions: answer {', '.join(ids)}"),
                {"DECISIONS.md": pack.add_blob(decisions_text(state, end, j + 1))})
        start = end
    asked = {d.asked_at for d in state.decisions}
    for entry in plan.entries[plan.recent_start:]:
        b = entry.index + 1
        files = {"LOG.md": versions.log_at(b), "NOW.md": versions.now_at(b)}
        if entry.index in asked:
            files["DECISIONS.md"] = pack.add_blob(decisions_text(state, b, len(plan.chunks)))
        message = f"cycle {entry.cycle}: {entry.task}" if entry.cycle else f"gitmem: {entry.task}"
        add(CommitSpec(False, entry.when + timedelta(minutes=5), message), files)
    return specs


def _memory_backend(pygit2: Any) -> Any:
    """An object store in memory for trees and commits: libgit2 loose writes cost ~0.3 ms each here,
    which at 100x (300,000 objects) would dominate the build. Everything is packed at the end."""

    class MemoryObjects(pygit2.OdbBackend):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.objects: dict[bytes, tuple[int, bytes]] = {}

        def exists_cb(self, oid: Any) -> bool:
            return oid.raw in self.objects

        def read_cb(self, oid: Any) -> tuple[int, bytes]:
            return self.objects[oid.raw]

        def read_header_cb(self, oid: Any) -> tuple[int, int]:
            kind, data = self.objects[oid.raw]
            return kind, len(data)

        def write_cb(self, oid: Any, data: bytes, kind: int) -> None:
            self.objects[oid.raw] = (int(kind), bytes(data))

        def refresh_cb(self) -> None:
            return None

    return MemoryObjects()


def build(target: Path, plan: Plan, state: State, templates: dict[str, str], human: tuple[str, str],
          roadmap: Callable[[Plan, int], bytes]) -> tuple[str, int]:
    import pygit2
    from pygit2.enums import CheckoutStrategy, FileMode

    target.mkdir(parents=True, exist_ok=True)
    repo = pygit2.init_repository(str(target), initial_head="main")
    agent = Config().agent
    repo.config["user.name"], repo.config["user.email"] = agent.name, agent.email
    pack_dir = Path(repo.path) / "objects" / "pack"
    pack = PackWriter(pack_dir)
    specs = _schedule(plan, state, templates, pack, roadmap)
    pack.finish()
    memory = _memory_backend(pygit2)
    repo.odb.add_backend(memory, 100)           # highest priority: writes land in memory

    root_tree: pygit2.Oid | None = None
    sub_trees: dict[str, pygit2.Oid | None] = {"prompts": None, "work": None}
    parent: list[pygit2.Oid] = []
    for spec in specs:
        builder = repo.TreeBuilder(root_tree) if root_tree is not None else repo.TreeBuilder()
        nested: dict[str, dict[str, bytes]] = {}
        for path, oid in spec.files.items():
            folder, _, name = path.rpartition("/")
            if folder:
                nested.setdefault(folder, {})[name] = oid
            else:
                builder.insert(name, pygit2.Oid(raw=oid), FileMode.BLOB)
        for folder, files in nested.items():
            prior = sub_trees[folder]
            sub = repo.TreeBuilder(prior) if prior is not None else repo.TreeBuilder()
            for name, oid in files.items():
                sub.insert(name, pygit2.Oid(raw=oid), FileMode.BLOB)
            sub_trees[folder] = written = sub.write()
            builder.insert(folder, written, FileMode.TREE)
        root_tree = builder.write()
        name, email = human if spec.human else (agent.name, agent.email)
        signature = pygit2.Signature(name, email, int(spec.when.timestamp()), 0)
        parent = [repo.create_commit(None, signature, signature, spec.message + "\n", root_tree, parent)]
    objects = PackWriter(pack_dir)
    for oid, (kind, data) in memory.objects.items():
        objects.add_object(oid, kind, data)
    objects.finish()
    del repo, memory
    repo = pygit2.Repository(str(target))
    repo.references.create("refs/heads/main", parent[0], force=True)
    repo.checkout_head(strategy=CheckoutStrategy.FORCE)
    return str(parent[0]), len(specs)
