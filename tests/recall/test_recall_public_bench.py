"""The public-benchmark adapter (benchmarks/bench_recall_public.py) on the committed synthetic conversations: each
session one checked LOG entry, each question asked through the real engine, scored as LoCoMo scores retrieval."""
from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.bench_recall_public import (
    CALLERS,
    Answer,
    PlainBM25,
    answers,
    callers,
    log_text,
    measure,
    recall_at,
    write,
)
from benchmarks.public_sets import SYNTHETIC, Question, locomo
from gitmem.memory import log


@pytest.fixture(scope="module")
def conversations() -> list:
    return locomo(SYNTHETIC)


def test_each_session_is_one_log_entry_in_the_documented_format(conversations: list) -> None:
    conversation = conversations[0]
    text, units = log_text(conversation, "session")
    entries = log.parse("# LOG\n" + text).entries
    assert len(entries) == len(conversation.sessions) == len(units)
    assert [entry.cycle for entry in entries] == list(range(1, len(entries) + 1))
    assert units["cycle 3"] == "3" and str(entries[2].when) == "2024-04-02 20:05 UTC"
    turns, _ = log_text(conversation, "dialog")
    assert len(log.parse("# LOG\n" + turns).entries) == sum(len(s.turns) for s in conversation.sessions)


def test_the_written_memory_passes_gitmem_check_and_maps_hits_to_sessions(tmp_path: Path, git_env: None,
                                                                          conversations: list) -> None:
    memory = write(conversations[1], "session", tmp_path / "repo")      # raises unless `gitmem check` exits 0
    try:
        found = answers(memory, CALLERS["evidence"], 0)
        storm = next(a for a in found if a.question.text == "Who helped Ravi steer during the storm?")
        assert storm.ranked[0] == "3" and not storm.empty
    finally:
        memory.close()


def test_best_evidence_answers_every_answerable_question(tmp_path: Path, git_env: None, conversations: list) -> None:
    # Most of these questions do not say their answer's words ("What did Ines make in her first lesson at the
    # studio?" against "My first bowl came out lopsided"): the coverage floor, a condition of being found
    # before, answered "no memory" to 70% of them. The check still says it: asked "is this known at all?",
    # such questions get no hit.
    rows = {(row.unit, row.caller, row.category): row
            for row in measure("synthetic", conversations, tmp_path, units=("session",))}
    evidence = rows["session", "evidence", "answerable"]
    assert evidence.no_memory == 0.0 and evidence.r5 >= 0.9
    assert rows["session", "evidence", "multi-hop"].all5 >= 0.75      # both statements of an update, both parts
    assert rows["session", "known", "answerable"].no_memory > 0.5
    assert rows["session", "known", "adversarial"].no_memory == 1.0


def test_one_half_measures_only_the_conversations_of_that_parity(tmp_path: Path, git_env: None,
                                                                  conversations: list) -> None:
    # Iterating on one half leaves the other held out: only half 1's conversation is written and asked.
    rows = measure("synthetic", conversations, tmp_path, units=("session",), callers={}, halves=("all", "0", "1"),
                   half=1)
    asked = {row.half: row.questions for row in rows if row.category == "every question"}
    assert "0" not in asked
    assert asked["1"] == asked["all"] == len(conversations[1].questions)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["session-1"]


def test_a_caller_asks_for_the_hits_its_limit_says_and_is_named_for_it(tmp_path: Path, git_env: None,
                                                                      conversations: list) -> None:
    # R@10 needs ten hits, and the agent's default call asks for recall.limit (6): `--limit` measures what a
    # caller with another limit gets, named so that no row passes for the other.
    assert callers("bm25") is CALLERS
    chosen = callers("bm25", 2)
    assert sorted(chosen) == ["evidence (limit 2)", "known (limit 2)", "known --all (limit 2)"]
    memory = write(conversations[1], "session", tmp_path / "repo")
    try:
        found = answers(memory, chosen["evidence (limit 2)"], 0)
    finally:
        memory.close()
    assert max(len(answer.ranked) for answer in found) == 2


def test_locomo_recall_counts_each_evidence_dialog_by_its_unit() -> None:
    question = Question("q", "multi-hop", ("1", "3"), ("D1:2", "D3:5", "D3:6"), True)
    answer = Answer(question, 0, ("3", "2"), False)
    assert recall_at(answer, "session", 5) == pytest.approx(2 / 3)      # task_eval/evaluation.py's recall_acc
    assert recall_at(answer, "session", 5, every=True) == 0.0
    assert recall_at(answer, "session", 1) == pytest.approx(2 / 3)
    assert recall_at(Answer(question, 0, ("D3:5", "D1:2"), False), "dialog", 5) == pytest.approx(2 / 3)


def test_the_plain_reference_is_okapi_bm25_without_stemming() -> None:
    plain = PlainBM25([("a", "the boat sails"), ("b", "sailing the boats at the boat club"), ("c", "nothing")])
    assert plain.rank("boat", 5) == ["a", "b"]            # shorter entry first at equal term frequency... per length
    assert plain.rank("sail", 5) == []                     # no stemming: "sail" is not "sails" nor "sailing"
    assert plain.rank("unknown words", 5) == []
