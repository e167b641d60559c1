"""GM922: a commit that moves a memory role to another file (gitmem.yaml's `files` or `memory_dir`) must carry
the old file's content forward.

Each side is read with its own config and the old side's files under the new names (`RenamedSnapshot`), so the
role's own history rules already compare the old file with the new one: an emptied LOG is GM301, a lost
decision GM206. This rule names the cause on top of them, once per moved role. NOW has no history rule, so for
NOW the old top block (the current state) must still be there.
"""
from __future__ import annotations

from collections.abc import Collection

from gitmem import codes
from gitmem.checks.inputs import CheckInput
from gitmem.checks.violation import Violation
from gitmem.memory import now
from gitmem.memory.decoding import decode_text

# The codes by which a role's rules say that history went missing.
HISTORY_CODES = {codes.LOG_NOT_APPEND_ONLY.code, codes.DECISION_RESOLVED_REWRITTEN.code,
                 codes.DECISION_ID_VANISHED.code, codes.LESSON_VANISHED.code, codes.RULE_VANISHED.code,
                 codes.MEMORY_FILE_MISSING.code}


def check(inp: CheckInput, earlier: Collection[Violation] = ()) -> list[Violation]:
    lost: list[Violation] = []
    for role, old_path, new_path in inp.remapped:
        if inp.old is None or inp.old.read(new_path) is None:
            continue                    # there was nothing to carry
        if _dropped(inp, role, new_path, earlier):
            lost.append(Violation.of(codes.MEMORY_REMAPPED, new_path, 1, role=role, old=old_path, new=new_path))
    return lost


def _dropped(inp: CheckInput, role: str, path: str, found: Collection[Violation]) -> bool:
    new = inp.new.read(path)
    if new is None or any(v.path == path and v.code in HISTORY_CODES for v in found):
        return True
    if role != "now":
        return False
    assert inp.old is not None
    top = now.parse(decode_text(inp.old.read(path) or b""), max_blocks=1).top
    return top is not None and top.render() not in now.render(now.parse(decode_text(new)))
