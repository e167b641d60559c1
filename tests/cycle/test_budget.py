"""The reading budget: parts in order with exact sources, newly resolved decisions, tail-only LOG reads, the guard."""
from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from gitmem.config import load_config
from gitmem.cycle.budget import (
    NEWLY_RESOLVED,
    BudgetError,
    _resolved_cut,
    build_request,
    estimate_tokens,
)
from gitmem.memory_writer import MemoryWriter
from gitmem.workspace import Workspace
from gitmem.workspace import head_and_tail as tailread
from tests.support.fake_anthropic import count_tokens, messages_api
from tests.support.helpers import GitRepo

START = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> datetime:
        return self.now

    def at(self, minutes: int) -> Clock:
        self.now = START + timedelta(minutes=minutes)
        return self


def lines_of(repo: GitRepo, source: str) -> str:
    """The text of `FILE:a-b` as it stands in the file."""
    rel, span = source.split(" ")[0].split(":")
    first, last = (int(n) for n in span.split("-"))
    return "\n".join(repo.read(rel).split("\n")[first - 1:last])


MEMORY = ("NOW.md", "DECISIONS.md", "LOG.md")


def history(repo: GitRepo) -> MemoryWriter:
    """Two committed cycles; D-0001 answered before cycle 2 started, D-0002 after it logged, D-0003 pending."""
    clock = Clock()
    memory = MemoryWriter(Workspace.at(repo.path), clock=clock)
    memory.add_log_entry(task="set up", outcome="built", result="repo ready", cycle=1)
    memory.add_now_block(did="set up", human="answer D-0001", next="ship", cycle=1)
    for n, title in enumerate(("Ship on Fridays?", "Weekly report?", "Rename the tool?")):
        clock.at(5 + n)
        memory.ask_decision(title=title, recommendation="yes", cycle=1)
    repo.stage(*MEMORY)
    repo.commit("gitmem: cycle 1")
    clock.at(30)
    memory.answer_decision("D-0001", answer="no", name="Ada", email="ada@example.com")
    repo.stage(*MEMORY)
    repo.commit("answer D-0001")
    clock.at(60)
    memory.add_log_entry(task="ship", outcome="published", result="v0.1 out", cycle=2)
    memory.add_now_block(did="shipped v0.1", human="nothing", next="report", cycle=2)
    repo.stage(*MEMORY)
    repo.commit("gitmem: cycle 2")
    clock.at(90)
    memory.answer_decision("D-0002", answer="yes, Mondays", name="Ada", email="ada@example.com")
    repo.stage(*MEMORY)
    repo.commit("answer D-0002")
    return memory


def test_parts_in_order_each_naming_its_file_and_lines(memrepo: GitRepo) -> None:
    history(memrepo)
    request = build_request(Workspace.at(memrepo.path), now=START + timedelta(hours=2))
    assert [p.name for p in request.parts] == ["rules", "now", "decisions", "log", "roadmap"]
    rules, top, asked, logged, road = request.parts
    assert rules.cacheable and rules.source == f"RULES.md:1-{len(memrepo.read('RULES.md').splitlines())}"
    for part in (rules, top, logged, road):
        assert part.text == lines_of(memrepo, part.source), part.source
    assert top.text.splitlines()[0] == "## 2026-11-30 09:00 UTC · cycle 2"
    assert logged.source.endswith("(last 2 of the LOG)") and "cycle 1 · built" in logged.text
    assert request.cycle == 3 and request.env["GITMEM_CYCLE"] == "3"
    assert request.prompt_text().startswith(f"## {rules.source}\n\n# RULES\n")


def test_pending_and_newly_resolved_decisions(memrepo: GitRepo) -> None:
    history(memrepo)
    part = build_request(Workspace.at(memrepo.path)).parts[2]
    pending, resolved = part.text.split(f": {NEWLY_RESOLVED}")
    assert "D-0003 · Rename the tool?" in pending and "D-0002" not in pending
    assert pending.endswith("## Resolved since the previous cycle started")
    assert "D-0002 · Weekly report?" in resolved and "- Answer: yes, Mondays" in resolved
    assert "D-0001" not in part.text   # in the tree the last cycle started from: that cycle already saw it
    lines = memrepo.read("DECISIONS.md").split("\n")
    first, last = (int(n) for n in part.source.split(":")[1].split("-"))
    assert lines[first - 1] == "### D-0003 · Rename the tool?"
    assert lines[last - 1].startswith("- Answered: 2026-11-30 09:30 UTC by Ada")


def test_before_the_first_cycle_every_resolved_decision_is_new(memrepo: GitRepo) -> None:
    memory = MemoryWriter(Workspace.at(memrepo.path), clock=Clock())
    memory.ask_decision(title="Go?", recommendation="yes", cycle=1)
    memory.answer_decision("D-0001", answer="go", name="Ada", email="ada@example.com")
    part = build_request(Workspace.at(memrepo.path)).parts[2]
    assert part.text.split(NEWLY_RESOLVED)[1].lstrip().startswith("### D-0001 · Go?")


def test_instructions_are_filled_from_the_clock_and_config(memrepo: GitRepo) -> None:
    memrepo.write("gitmem.yaml", memrepo.read("gitmem.yaml").replace("timezone: UTC", "timezone: Europe/Madrid")
                  .replace("    - measure\n", "    - measure\n    - tidy up\n"))
    config = load_config(memrepo.path)
    request = build_request(Workspace.at(memrepo.path, config), now=datetime(2026, 11, 30, 9, 30, tzinfo=UTC), cycle=7)
    text = request.instructions
    assert request.timestamp == "2026-11-30 10:30 +01:00"
    assert "It is 2026-11-30 10:30 +01:00, Monday (Europe/Madrid). This is cycle 7." in text
    assert "1. answer people\n2. fix the published product\n3. build something new\n4. measure\n5. tidy up" in text
    assert "Rule 0" in text and "Files over 300 lines: search them, don't read them." in text
    assert "- log_entry:" in text and "gitmem log add" not in text
    commands = build_request(Workspace.at(memrepo.path, config), cycle=7, backend="command").instructions
    assert "gitmem log add --task" in commands and "- log_entry:" not in commands
    assert request.env == {"GITMEM_CYCLE": "7", "GITMEM_ROOT": str(memrepo.path),
                           "GITMEM_TIMESTAMP": "2026-11-30 10:30 +01:00", "GITMEM_WORKSPACE": ""}


def test_a_custom_prompt_keeps_unknown_braces(memrepo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    memrepo.write("prompts/cycle.md", 'Cycle {cycle}; emit {"ok": true} and {unknown}. Over {grep_over_lines}.\n')
    monkeypatch.setenv("GITMEM_CYCLE", "42")
    request = build_request(Workspace.at(memrepo.path))
    assert request.instructions == 'Cycle 42; emit {"ok": true} and {unknown}. Over 300.\n'


def test_always_load_files_come_last_and_stay_inside(memrepo: GitRepo) -> None:
    memrepo.write("IDENTITY.md", "# Me\nI am the release bot.\n")
    memrepo.write("gitmem.yaml", memrepo.read("gitmem.yaml").replace(
        "cycle:\n", "cycle:\n  always_load: [IDENTITY.md, ../secret.txt]\n"))
    parts = build_request(Workspace.at(memrepo.path)).parts
    assert [(p.name, p.source) for p in parts[-2:]] == [("extra", "IDENTITY.md:1-2"), ("extra", "../secret.txt")]
    assert parts[-2].text == "# Me\nI am the release bot." and "outside the repository" in parts[-1].text


def entry(n: int, body: str = "did a thing") -> str:
    hour, minute = divmod(n, 60)
    return f"## 2026-01-{1 + hour // 24:02d} {hour % 24:02d}:{minute:02d} UTC · cycle {n} · built\n- Task: t{n}\n" \
           f"- Result: {body}\n"


def test_a_big_log_is_read_from_its_tail_only(memrepo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    memrepo.write("LOG.md", "# LOG\n\n" + "\n".join(entry(n) for n in range(1, 3001)))
    config = load_config(memrepo.path)
    part = build_request(Workspace.at(memrepo.path, config)).parts[3]
    assert part.text == lines_of(memrepo, part.source)
    assert part.text.startswith("## 2026-01-03 01:58 UTC · cycle 2998 · built")
    assert (memrepo.path / ".git" / "gitmem" / tailread.LINES_CACHE).is_file()
    # With the line count cached, appending and rebuilding counts only the new bytes' lines. (The fence state is
    # counted from the whole file's bytes each time: it decides which lines are entries, so no cache gives it.)
    counted: list[int] = []
    real_count = tailread._newlines
    monkeypatch.setattr(tailread, "_newlines", lambda h, a, b: counted.append(b - a) or real_count(h, a, b))
    memrepo.append("LOG.md", "\n" + entry(3001, "appended later"))
    part = build_request(Workspace.at(memrepo.path, config)).parts[3]
    assert part.text == lines_of(memrepo, part.source) and "appended later" in part.text
    assert sum(counted) < tailread.FIRST_BLOCK + 1000 and request_cycle(memrepo) == 3002
    # A rewritten history (old entries dropped) is detected and counted again from the start.
    memrepo.write("LOG.md", "# LOG\n\n" + "\n".join(entry(n) for n in range(2000, 3005)))
    part = build_request(Workspace.at(memrepo.path, config)).parts[3]
    assert part.text == lines_of(memrepo, part.source) and "cycle 3004" in part.text


def request_cycle(repo: GitRepo) -> int:
    return build_request(Workspace.at(repo.path)).cycle


def test_close_entries_do_not_hide_the_last_cycle(memrepo: GitRepo) -> None:
    closes = "".join(f"\n## 2026-01-09 0{n}:00 UTC · close\n- Report: day {n}\n" for n in range(5))
    memrepo.write("LOG.md", "# LOG\n\n" + entry(1) + "\n" + entry(2).replace("built", "no-build") + closes)
    request = build_request(Workspace.at(memrepo.path))
    assert request.cycle == 3
    assert request.parts[3].text.count("· close") == 3


def test_only_the_top_now_block_is_read(memrepo: GitRepo) -> None:
    blocks = "\n".join(f"## 2026-01-01 00:00 UTC · cycle {n}\n- Did: d{n}\n- Human: h\n- Next: x\n"
                       for n in range(5000, 0, -1))
    memrepo.write("NOW.md", "# NOW\n\n" + blocks)
    part = build_request(Workspace.at(memrepo.path)).parts[1]
    assert part.source == "NOW.md:3-6" and part.text.endswith("- Next: x") and "d5000" in part.text
    head = tailread.read_head(memrepo.path, "NOW.md", tailread.second_heading)
    assert head.endswith("- Next: x\n\n") and head.count("## ") == 1


def test_decisions_are_read_down_to_the_old_resolved_ones(memrepo: GitRepo) -> None:
    old = "".join(f"### D-{n:04d} · old {n}\n- Asked: 2025-01-01 10:00 UTC (cycle 1)\n- Recommendation: r\n"
                  f"- Answer: a\n- Answered: 2025-01-02 10:00 UTC by Ada <ada@example.com>\n\n"
                  for n in range(2000, 1, -1))
    new = ("### D-2001 · fresh\n- Asked: 2025-01-01 10:00 UTC (cycle 1)\n- Recommendation: r\n- Answer: go\n"
           "- Answered: 2026-01-05 10:00 UTC by Ada <ada@example.com>\n\n")
    pending = ("# DECISIONS\n\n## Pending\n\n### D-0001 · open\n- Asked: 2025-01-01 10:00 UTC (cycle 1)\n"
               "- Recommendation: r\n\n## Resolved\n\n")
    memrepo.commit_files({"DECISIONS.md": pending + old}, "old answers")
    memrepo.commit_files({"LOG.md": "# LOG\n\n" + entry(1).replace("2026-01-01", "2026-01-04")}, "cycle 1")
    memrepo.commit_files({"DECISIONS.md": pending + new + old}, "a fresh answer")
    part = build_request(Workspace.at(memrepo.path)).parts[2]
    assert "D-0001 · open" in part.text and "D-2001 · fresh" in part.text and "old" not in part.text
    assert part.source == "DECISIONS.md:5-15"
    before = {f"D-{n:04d}" for n in range(2, 2001)}
    head = tailread.read_head(memrepo.path, "DECISIONS.md", lambda text: _resolved_cut(text, before))
    assert head.count("### D-") == 2 and len(head) < 600


def test_soft_limit_trims_log_then_roadmap_and_warns(memrepo: GitRepo) -> None:
    long = "x" * 3000
    memrepo.write("LOG.md", "# LOG\n\n" + "\n".join(entry(n, long) for n in range(1, 6)))
    base = build_request(Workspace.at(memrepo.path))
    one_entry = base.total_tokens - base.parts[3].tokens + estimate_tokens(
        f"## LOG.md:x-y (last 1 of the LOG)\n\n{entry(5, long)}") + 10
    memrepo.write("gitmem.yaml", memrepo.read("gitmem.yaml").replace(
        "max_context_tokens: 60000", f"max_context_tokens: {int(one_entry / 0.7) + 5}"))
    trimmed = build_request(Workspace.at(memrepo.path))
    assert trimmed.parts[3].source.endswith("(last 1 of the LOG)") and "cycle 5 · built" in trimmed.parts[3].text
    assert trimmed.warnings == (f"context over the soft limit ({int((int(one_entry / 0.7) + 5) * 0.7)} tokens): "
                                "LOG trimmed to the last 1 entry",)
    assert trimmed.parts[4].text.startswith("## First week")   # the roadmap fit: it stays
    memrepo.write("gitmem.yaml", memrepo.read("gitmem.yaml").replace(
        f"max_context_tokens: {int(one_entry / 0.7) + 5}", f"max_context_tokens: {int(one_entry / 0.8)}"))
    tighter = build_request(Workspace.at(memrepo.path))
    assert tighter.parts[4].text.startswith("(trimmed to fit the budget")
    assert tighter.parts[0].text == base.parts[0].text
    assert any("ROADMAP section ROADMAP.md:4-7 left out" in w for w in tighter.warnings)


def test_hard_limit_names_the_largest_part(memrepo: GitRepo) -> None:
    memrepo.write("RULES.md", memrepo.read("RULES.md") + "- a long rule\n" * 3000)
    memrepo.write("gitmem.yaml", memrepo.read("gitmem.yaml").replace("max_context_tokens: 60000",
                                                                      "max_context_tokens: 5000"))
    with pytest.raises(BudgetError) as caught:
        build_request(Workspace.at(memrepo.path))
    message = str(caught.value)
    assert "over the hard limit of 4325 (86.5% of cycle.max_context_tokens=5000)" in message
    assert f"the largest part is RULES.md:1-{len(memrepo.read('RULES.md').splitlines())}" in message


def test_a_token_counter_is_used_per_part() -> None:
    assert estimate_tokens("a" * 7) == 2 and estimate_tokens("a" * 8) == 3 and estimate_tokens("") == 0


def test_counter_function_sizes_every_part(memrepo: GitRepo) -> None:
    words = lambda text: len(text.split())  # noqa: E731
    request = build_request(Workspace.at(memrepo.path), count_tokens=words)
    for part in request.parts:
        assert part.tokens == words(f"## {part.source}\n\n{part.text}")
    assert request.total_tokens == sum(p.tokens for p in request.parts) + words(request.instructions)


def test_cli_prints_the_prompt_and_json(memrepo: GitRepo, cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    history(memrepo)
    text = cli(["context"], cwd=memrepo.path)
    assert text.code == 0 and text.out.startswith("## RULES.md:1-") and "This is cycle 3." in text.out
    assert text.out.index("## NOW.md:") < text.out.index("## DECISIONS.md:") < text.out.index("## LOG.md:")
    data = json.loads(cli(["context", "--json", "--cycle", "9"], cwd=memrepo.path).out)
    assert data["cycle"] == 9 and data["counting"] == "estimate"
    assert [p["name"] for p in data["parts"]] == ["rules", "now", "decisions", "log", "roadmap"]
    assert data["total_tokens"] == sum(p["tokens"] for p in data["parts"]) + data["instructions"]["tokens"]
    assert data["limits"] == {"max_context_tokens": 60000, "soft": 42000, "hard": 51900}
    commands = cli(["context", "--agent", "command"], cwd=memrepo.path)
    assert "gitmem now add --did" in commands.out


def test_cli_refuses_over_the_hard_limit(memrepo: GitRepo, cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    memrepo.write("gitmem.yaml", memrepo.read("gitmem.yaml").replace("max_context_tokens: 60000",
                                                                      "max_context_tokens: 200"))
    result = cli(["context"], cwd=memrepo.path)
    assert result.code == 1 and result.out == ""
    assert "the largest part is RULES.md:1-28" in result.err


@pytest.mark.parametrize(("extra", "expected"), [
    ("", "## Month 300 (current)"),
    ("## Month 301\n- [ ] later\n", "## Month 300 (current)"),
])
def test_the_current_roadmap_section_of_a_long_roadmap(memrepo: GitRepo, extra: str, expected: str) -> None:
    done = "".join(f"## Month {n}\n- [x] done {n}\nWe said (current) in prose once.\n\n" for n in range(1, 300))
    memrepo.write("ROADMAP.md", f"# ROADMAP\n\n{done}## Month 300 (current)\n- [x] a\n- [ ] b\n\n{extra}")
    part = build_request(Workspace.at(memrepo.path)).parts[4]
    assert part.text.splitlines()[0] == expected and part.text == lines_of(memrepo, part.source)
    memrepo.write("ROADMAP.md", f"# ROADMAP\n\n{done}## Month 300\n  - [ ] open, indented\n\n## Month 301 (current)\n")
    part = build_request(Workspace.at(memrepo.path)).parts[4]
    assert part.text == "## Month 300\n  - [ ] open, indented" == lines_of(memrepo, part.source)


@pytest.mark.parametrize("broken", [False, True])
def test_cli_counts_exactly_when_a_key_is_set(memrepo: GitRepo, cli, monkeypatch: pytest.MonkeyPatch,
                                              broken: bool) -> None:
    calls: list[int] = []
    with messages_api(count_tokens(calls, broken)) as url:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-key-for-the-fake")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", url)
        result = cli(["context", "--json"], cwd=memrepo.path)
        data = json.loads(result.out)
        rules = data["parts"][0]
        if broken:
            assert data["counting"] == "estimate" and "exact token count unavailable" in result.err
            assert "sk-ant-test-key-for-the-fake" not in result.err
            assert rules["tokens"] == estimate_tokens(f"## {rules['source']}\n\n{rules['text']}")
        else:
            assert data["counting"] == "exact" and len(calls) == len(data["parts"]) + 1
            assert rules["tokens"] == len(f"## {rules['source']}\n\n{rules['text']}".split())
        offline = json.loads(cli(["context", "--json", "--offline"], cwd=memrepo.path).out)
        assert offline["counting"] == "estimate"
