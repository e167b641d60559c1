"""`gitmem import SOURCE`: read a source, plan the batch against the memory, and land it for the human's review.

Nothing imported becomes a rule or a resolved decision by itself: corrections land as open lessons (two
confirmations by later cycles promote one, as any lesson), the other facts as proposals, and one Pending decision
per batch lists everything the batch adds, each fact with its origin beside it. Secrets in imported text are
masked here, the one place a fact enters gitmem.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from types import ModuleType

from gitmem import secrets
from gitmem.checks import render
from gitmem.checks.violation import Violation
from gitmem.checks.written_times import not_begun_anywhere
from gitmem.interop import agent_memory_repo, claude_code, cline, codex, gemini, notes
from gitmem.interop.batch_limit import BatchOverPending, over_pending
from gitmem.interop.exported_by import comparable, records_of
from gitmem.interop.facts import Fact, normalized
from gitmem.interop.plan import (
    HOW_PREFIX,
    ORIGIN_FIELD,
    REPLACES_FIELD,
    ImportPlan,
    ImportStep,
    entries,
    known,
    plan_import,
)
from gitmem.interop.sources import NotRead, Reader, SourceMissing, SourceProblem, shown_dir, source_missing
from gitmem.memory.lessons import Lesson
from gitmem.memory_writer import BatchDecision, MemoryWriter, NewLesson
from gitmem.workspace import Workspace

SOURCE_READERS: dict[str, ModuleType] = {module.NAME: module for module in
                                         (claude_code, codex, gemini, cline, agent_memory_repo, notes)}


@dataclass(frozen=True)
class Batch:
    source: str
    places: tuple[str, ...]        # the directories read, as origins name them
    facts: tuple[Fact, ...]
    not_read: tuple[NotRead, ...] = ()     # files the source's files name that were not read, and why


@dataclass(frozen=True)
class Landed:
    lessons: tuple[str, ...]
    decision: str | None


@dataclass(frozen=True)
class Imported:
    """One `gitmem import`: the batch read, its plan, GM954 when the batch's decision would not fit Pending, and
    what landed (None on a dry run or a refusal: then nothing was written)."""

    batch: Batch
    plan: ImportPlan
    refused: Violation | None
    landed: Landed | None
    dry_run: bool


def masked(fact: Fact, values: list[str]) -> Fact:
    """`fact` with every secret masked: the environment's `values` (`secrets.env_values`, found once per import)
    and whatever looks like one."""

    def scrub(text: str | None) -> str | None:
        return secrets.redact(text, values, passwords=True) if text else text

    # Every text of the fact that lands in memory: its name (`anchor`) too, which the Origin line carries.
    return replace(fact, file=scrub(fact.file) or "", text=scrub(fact.text) or "", why=scrub(fact.why),
                   how=scrub(fact.how), anchor=scrub(fact.anchor))


def collect_facts(source: str, workspace: Workspace, *, where: Path | None, environ: Mapping[str, str],
            home: Path) -> Batch:
    """Every fact of `source`, read where its CLI keeps it (or at `where`); SourceProblem names each file that
    cannot be read, SourceMissing says when there is nothing at all."""
    module = SOURCE_READERS[source]
    project = workspace.root
    roots = [where] if where is not None else module.default_roots(workspace, environ, home)
    present = [root for root in roots if root.is_dir()]
    if not roots:
        raise SourceMissing(f"the {module.WHAT} has no place of its own: name its directory with --from PATH")
    if not present:
        raise source_missing(roots[0], module.WHAT)
    facts: list[Fact] = []
    problems: list[Violation] = []
    not_read: list[NotRead] = []
    places = []
    files_read = 0
    own = frozenset(os.path.abspath(project / path) for paths in workspace.config.workspace_paths().values()
                    for path in paths.values())      # every workspace's memory files: never a source's
    for root in present:
        if where is None and _linked_in(project, root, problems):
            continue
        reader = Reader(root, workspace.config.tzinfo(), own)
        prefix = shown_dir(root, project, home)
        places.append(secrets.redact(prefix, secrets.env_values(environ)))   # the Context line names it
        facts += exported_elsewhere(module.read(reader, prefix), reader, prefix, records_of(workspace))
        problems += reader.problems
        not_read += reader.not_read
        files_read += reader.files_read
    if problems:
        raise SourceProblem(f"cannot import the {module.WHAT}: {len(problems)} problem(s); nothing was imported",
                            sorted(problems, key=lambda v: (v.path, v.line)))
    if not files_read:      # a folder holding none of its files (a wrong --from) is no source, not one imported
        raise source_missing(roots[0], module.WHAT)
    now, values = workspace.clock()(), secrets.env_values(environ)
    return Batch(source, tuple(places), tuple(masked(dated(fact, now), values) for fact in facts),
                 tuple(replace(item, file=secrets.redact(item.file, values, passwords=True),
                               target=secrets.redact(item.target, values, passwords=True)) for item in not_read))


def exported_elsewhere(found: list[Fact], reader: Reader, prefix: str, here: Collection[str]) -> list[Fact]:
    """`found`, each fact of a file another memory exported marked `foreign`: its `[gitmem: L-0001]` names that
    memory's L-0001 (another repository's, another workspace's), so it is imported as any other fact. A file
    exported from this memory (named by any of `here`, gitmem.interop.exported_by.records_of), or with no marker,
    keeps its tags."""
    ours = {comparable(record) for record in here}

    def foreign(fact: Fact) -> bool:
        record = reader.exported_by.get(fact.file.removeprefix(f"{prefix}/"))
        return record is not None and comparable(record) not in ours

    return [replace(fact, foreign=True) if foreign(fact) else fact for fact in found]


def dated(fact: Fact, now: datetime) -> Fact:
    """`fact`, its written day unknown when that day has not begun anywhere yet (a file time set ahead, an
    `added:` day to come): a source's claim, never a day ahead of the clock in memory (GM730's rule)."""
    if fact.written is not None and not_begun_anywhere(fact.written, now):
        return replace(fact, written=None)
    return fact


def _linked_in(project: Path, root: Path, problems: list[Violation]) -> bool:
    """Whether the default place `root` lies in the repository through a symbolic link (`memory-bank` made a link
    to another folder), named in `problems` as any linked source file is: the repository's own folder is read,
    never one a link in it leads to. A place outside the repository is the CLI's, however the user links it."""
    try:
        steps = root.relative_to(project).parts
    except ValueError:
        return False
    reader = Reader(project)
    linked = reader.link_on_the_way("/".join(steps))
    problems += reader.problems
    return linked


def planned(batch: Batch, workspace: Workspace) -> ImportPlan:
    texts = workspace.read("lessons"), workspace.read("decisions")
    return plan_import(batch.facts, known(*texts), entries(*texts, workspace.read("rules")))


def _lesson(step: ImportStep) -> NewLesson:
    fact = step.fact
    written = fact.written.isoformat() if fact.written else "an unknown day"
    more = [(ORIGIN_FIELD, fact.origin.render())]
    if step.supersedes is not None:
        more.append((REPLACES_FIELD, f"{step.supersedes.where} (its text was edited in {fact.source})"))
    return NewLesson(
        title=fact.title(),
        happened=f"imported from {fact.source} ({fact.origin.file}:{fact.line}, written there {written}):\n{fact.text}",
        why=fact.why or f"{fact.source} kept it as a memory; it is not yet confirmed in this repository",
        change=normalized(fact.text) + (f"\n{HOW_PREFIX}{fact.how}" if fact.how else ""), more=tuple(more))


def proposal_line(number: int, step: ImportStep) -> str:
    line = f"P{number}: {normalized(step.fact.text)} (origin: {step.fact.origin.render()})"
    return line + (f" — replaces {step.supersedes.where}" if step.supersedes is not None else "")


def _describe(batch: Batch, result: ImportPlan, command: str) -> Callable[[list[Lesson]], BatchDecision]:
    def describe(added: list[Lesson]) -> BatchDecision:
        retire: dict[str, str] = {}
        lines = [f"`{command}` read {', '.join(batch.places)}."]
        if added:
            ids = ", ".join(lesson.id for lesson in added)
            lines.append(f"Lessons added, open until two later cycles confirm each: {ids}.")
        # An open lesson the source edited is retired; a promoted one stays as its rule's provenance, and the
        # new fact's Replaces line names it.
        for lesson, step in zip(added, result.lessons, strict=True):
            old = step.supersedes
            if old is not None and old.open_lesson:
                retire[old.where] = f"retired — superseded by {lesson.id}: its text was edited in {batch.source}"
        for step in result.proposals:
            old = step.supersedes
            if old is not None and old.open_lesson:
                retire[old.where] = f"retired — superseded by a proposal of this import: edited in {batch.source}"
        if result.proposals:
            lines.append("Proposed as standing facts of this project, none in force until you accept it:")
            lines += [proposal_line(number, step) for number, step in enumerate(result.proposals, 1)]
        count = len(added) + len(result.proposals)
        title = f"Accept {count} fact{'s' if count != 1 else ''} imported from {batch.source}"
        recommendation = ("Review each: answer with the proposals you accept (`P1 P3`, `all` or `none`); retire an "
                          "imported lesson you reject (`- Status: retired — …`)" if result.proposals else
                          "Keep the lessons open for confirmation, or retire one you reject (`- Status: retired — …`)")
        return BatchDecision(title, "\n".join(lines), recommendation, retire)
    return describe


def pending_limit_refusal(batch: Batch, result: ImportPlan, writer: MemoryWriter, *, command: str) -> Violation | None:
    """GM954 when the batch's one decision would put Pending over its limits (gitmem.interop.batch_limit), judged
    on DECISIONS exactly as `land` would write it; None when it fits or the plan adds nothing."""
    if not result.steps:
        return None
    _, _, texts = writer.compose_import([_lesson(step) for step in result.lessons], _describe(batch, result, command))
    return over_pending(texts["decisions"], writer.config, len(result.steps))


def over_pending_error(source: str, found: Violation, *, dry_run: bool = False) -> BatchOverPending:
    """The one refusal of a batch whose decision would not fit Pending (`found`, GM954): nothing is written."""
    return BatchOverPending(f"cannot import the batch from {source}: its decision would not fit Pending; nothing "
                            f"{'would be' if dry_run else 'was'} imported", [found])


def land(batch: Batch, result: ImportPlan, writer: MemoryWriter, *, command: str) -> Landed:
    """Write the batch: its lessons and its one decision (nothing when the plan adds nothing). A batch whose
    decision would not fit Pending is refused whole (BatchOverPending), nothing written."""
    if not result.steps:
        return Landed((), None)
    found = pending_limit_refusal(batch, result, writer, command=command)
    if found is not None:
        raise over_pending_error(batch.source, found)
    added, decision = writer.import_batch([_lesson(step) for step in result.lessons],
                                          _describe(batch, result, command))
    return Landed(tuple(lesson.id for lesson in added), decision.id)


def import_source(source: str, writer: MemoryWriter, workspace: Workspace, *, where: Path | None, dry_run: bool,
                  environ: Mapping[str, str], home: Path) -> Imported:
    """`gitmem import SOURCE`: collect the source's facts, plan them against the memory and, unless `dry_run`
    or the batch's decision would not fit Pending (`Imported.refused`), land them. The plan is made under the
    writer's lock, against the memory the batch is written over, not an older one."""
    batch = collect_facts(source, workspace, where=where, environ=environ, home=home)
    command = f"gitmem import {source}"
    landed = None
    with writer.locked():
        result = planned(batch, workspace)
        refused = pending_limit_refusal(batch, result, writer, command=command)
        if not dry_run and refused is None:
            landed = land(batch, result, writer, command=command)
    return Imported(batch, result, refused, landed, dry_run)


def imported_data(done: Imported) -> dict[str, object]:
    """What `--json` shows: the plan (`import_plan_as_data`), GM954 under `refused` when the batch was refused, and the
    entries written under `written`."""
    data = import_plan_as_data(done.batch, done.plan)
    if done.refused is not None:
        data["refused"] = render.as_data([done.refused])
    if done.landed is not None:
        data["written"] = {"lessons": list(done.landed.lessons), "decision": done.landed.decision}
    return data


def import_plan_as_data(batch: Batch, result: ImportPlan) -> dict[str, object]:
    """What `--dry-run` and `--json` show: where each fact would land, and what it would supersede."""
    def fact_data(fact: Fact) -> dict[str, object]:
        return {"file": fact.file, "line": fact.line, "text": fact.text, "origin": fact.origin.render(),
                "written": fact.written.isoformat() if fact.written else None, "key": fact.key}

    def step_data(step: ImportStep, lands: str) -> dict[str, object]:
        return {**fact_data(step.fact), "lands": lands,
                "supersedes": step.supersedes.where if step.supersedes else None}

    return {"source": batch.source, "read": list(batch.places),
            "lessons": [step_data(s, "LESSONS") for s in result.lessons],
            "proposals": [step_data(s, "DECISIONS") for s in result.proposals],
            "skipped": [{**fact_data(s.fact), "reason": s.reason} for s in result.skipped],
            "not_read": [{"file": item.file, "line": item.line, "target": item.target, "reason": item.reason,
                          "kind": item.kind}
                         for item in batch.not_read]}

