"""Property: every path that judges a change of LOG (`check`, the cycle's permissions, the memory-aware merge)
gives one verdict on whether it is an append, for random edits of a LOG (issue 20)."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitmem.checks import CheckInput, log_checks
from gitmem.config import Config
from gitmem.cycle.permissions import enforce
from gitmem.gitio.snapshots import Snapshot
from gitmem.memory import log
from gitmem.memory.timestamps import Timestamp
from gitmem.publish.merge import merge_log, resolver_for

PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CONFIG = Config()
PATH = CONFIG.path("log")
START = datetime(2026, 11, 29, 9, 0, tzinfo=UTC)

# Text an agent might type: no carriage returns or BOMs (the cycle reads text decoded, `check` reads bytes,
# and decoding normalises those two, so they are not the same edit to both).
_TEXT = st.text(st.characters(whitelist_categories=("L", "N", "P", "S", "Zs"), whitelist_characters="\n#`-·: "),
                max_size=40)


def entry(number: int, task: str = "t") -> str:
    when = Timestamp(START + timedelta(hours=number), "UTC")
    return log.make_entry(when, cycle=number, outcome="built", fields={"Task": task, "Result": "r"}).render()


@st.composite
def old_logs(draw: st.DrawFn) -> str:
    """A committed LOG: the title, one to four entries; maybe no final line end, maybe an unclosed code fence
    left by a LOG written before fences were checked."""
    count = draw(st.integers(1, 4))
    text = "# LOG\n\n" + "\n\n".join(entry(n) for n in range(1, count + 1)) + "\n"
    if draw(st.booleans()):
        text += "```\nsome code\n"
    if draw(st.booleans()):
        text = text.rstrip("\n")
    return text


@st.composite
def edits(draw: st.DrawFn, old: str) -> str | None:
    last = old.count("\n## ")
    kind = draw(st.sampled_from(["entry", "line", "edit", "delete", "truncate", "garbage", "whitespace",
                                 "close_fence", "blank", "gone", "same"]))
    lines = old.split("\n")
    if kind == "entry":
        return old + draw(st.sampled_from(["\n", "\n\n", ""])) + entry(last + 1, draw(_TEXT)) + "\n"
    if kind == "line":
        return old + draw(st.sampled_from(["\n", ""])) + "- Learned: " + draw(_TEXT) + "\n"
    if kind == "edit":
        at = draw(st.integers(0, len(lines) - 1))
        lines[at] = lines[at] + draw(_TEXT.filter(bool))
        return "\n".join(lines)
    if kind == "delete":
        at = draw(st.integers(0, len(lines) - 1))
        return "\n".join(lines[:at] + lines[at + draw(st.integers(1, 3)):])
    if kind == "truncate":
        return old[:draw(st.integers(0, len(old)))]
    if kind == "garbage":
        return old + draw(_TEXT)
    if kind == "whitespace":
        at = draw(st.integers(0, len(old)))
        return old[:at] + draw(st.sampled_from([" ", "\n", "\n\n", "\t", "  \n"])) + old[at:]
    if kind == "close_fence":
        return old + draw(st.sampled_from(["\n", ""])) + "```\n\n" + entry(last + 1) + "\n"
    if kind == "blank":
        return old + draw(st.sampled_from(["\n", "\n\n", "  \n", " "]))
    if kind == "gone":
        return None
    return old


def check_refuses(old: str, new: str | None) -> bool:
    files = {PATH: new.encode("utf-8")} if new is not None else {}
    inp = CheckInput(CONFIG, Snapshot.from_dict("old", {PATH: old.encode("utf-8")}), Snapshot.from_dict("new", files))
    return any(v.code == "GM301" for v in log_checks.check(inp, set()))


def cycle_reverts(old: str, new: str | None) -> bool:
    return "log" in enforce({"log": old}, {"log": new}).texts


def merge_declines(old: str, new: str | None) -> bool:
    resolve = resolver_for(CONFIG)
    data = new.encode("utf-8") if new is not None else None
    as_upstream = resolve(PATH, old.encode("utf-8"), data, old.encode("utf-8"))
    as_ours = resolve(PATH, old.encode("utf-8"), old.encode("utf-8"), data)
    assert (as_upstream is None) == (as_ours is None)
    if new is not None:
        assert (merge_log(old, new, old) is None) == (as_upstream is None)
    return as_upstream is None


@PROPERTY
@given(st.data())
def test_every_path_gives_the_one_append_verdict(data: st.DataObject) -> None:
    old = data.draw(old_logs())
    new = data.draw(edits(old))
    verdict = log.append_verdict(old.encode("utf-8"), new.encode("utf-8") if new is not None else None)
    assert check_refuses(old, new) == cycle_reverts(old, new) == merge_declines(old, new) == (not verdict.ok)


@PROPERTY
@given(st.data())
def test_what_the_cycle_keeps_of_a_refused_change_is_an_append(data: st.DataObject) -> None:
    old = data.draw(old_logs())
    new = data.draw(edits(old))
    fixed = enforce({"log": old}, {"log": new}).texts.get("log", new)
    assert fixed is not None
    verdict = log.append_verdict(old.encode("utf-8"), fixed.encode("utf-8"))
    # An entry kept below a LOG that leaves a fence open is still inside the fence: that old LOG needs a
    # closing line, which only the writer adds (gitmem.memory_writer).
    assert verdict.ok or verdict.variant == log.IN_OPEN_FENCE
