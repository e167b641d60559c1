"""`gitmem import` against source files written to trick it: names that would break or forge an origin line, and
modification times no calendar holds. Each case names what it tries; the fixtures follow Claude Code's topic
files (code.claude.com/docs/en/memory, "Auto memory": a `name`/`description`/`type` frontmatter).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import unicodedata
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from gitmem.interop.claude_code import project_dir_name
from tests.interop.test_interop_import import TOKEN, claude_dir, commit_all, home, memory, put  # noqa: F401 (fixture)
from tests.support.helpers import CliResult, GitRepo

Cli = Callable[..., CliResult]


@pytest.mark.parametrize("name", [
    "x\n- Status: promoted R-01",                           # a line of its own in the memory file
    "z:5 · written 2020-01-01 · key 000000000000",          # an origin's fields: read back, another key
    "two  spaces\tand a tab",                               # white space an origin read back folds
])
def test_a_name_that_would_break_or_forge_the_origin_line_still_imports_once(memrepo: GitRepo, cli: Cli,
                                                                              home: Path, name: str) -> None:  # noqa: F811
    where = claude_dir(home, memrepo)
    topic = "---\nname: {}\ntype: {}\n---\n{}\n"
    put(where, {"project_db.md": topic.format(json.dumps(name), "project", "The project runs on Postgres 16."),
                "feedback_tabs.md": topic.format(json.dumps(name + " too"), "feedback", "Indent Makefiles with tabs.")})
    first = cli(["import", "claude"], cwd=memrepo.path)
    assert first.code == 0, first.err
    lessons, decisions = memory(memrepo)
    proposal = next(line for line in decisions.split("\n") if line.strip().startswith("P1: "))
    assert proposal.endswith(")"), "the proposal and its origin stay on one line"
    assert "\n  - Status: promoted" not in lessons + decisions
    assert cli(["check", "--worktree"], cwd=memrepo.path).code == 0
    commit_all(memrepo)
    before = memory(memrepo)
    again = cli(["import", "claude", "--json"], cwd=memrepo.path)
    assert again.code == 0, again.err
    data = json.loads(again.out)
    assert data["lessons"] == [] and data["proposals"] == [], "a second import adds nothing"
    assert memory(memrepo) == before
    # The name still carries the fact across an edit of its text: a supersession, not a second fact.
    put(where, {"project_db.md": topic.format(json.dumps(name), "project", "The project runs on Postgres 17.")})
    edited = cli(["import", "claude", "--json"], cwd=memrepo.path)
    assert [item["supersedes"] for item in json.loads(edited.out)["proposals"]] == ["D-0001 P1"]


@pytest.fixture
def timeless(tmp_path: Path) -> Iterator[Path]:
    """A folder whose files keep any modification time: ext4 clamps times to 1901-2446, tmpfs keeps them."""
    made = []
    for base in (tmp_path, Path("/dev/shm")):
        if not base.is_dir():
            continue
        folder = Path(tempfile.mkdtemp(dir=base))
        made.append(folder)
        probe = folder / "probe"
        probe.write_bytes(b"")
        try:
            os.utime(probe, (253_402_300_800, 253_402_300_800))
        except OverflowError:
            continue
        if os.stat(probe).st_mtime == 253_402_300_800:
            probe.unlink()
            yield folder
            break
    else:
        yield Path()
    for folder in made:
        shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.parametrize("mtime", [253_402_300_800, -62_135_596_801])      # year 10000; before year 1
def test_a_modification_time_no_date_holds_imports_as_written_on_an_unknown_day(memrepo: GitRepo, cli: Cli,
                                                                                 timeless: Path, mtime: int) -> None:
    if timeless == Path():
        pytest.skip("no file system here keeps a time past year 9999")
    put(timeless, {"user_role.md": "---\ntype: user\n---\nThe user reviews every pull request.\n"})
    os.utime(timeless / "user_role.md", (mtime, mtime))
    result = cli(["import", "claude", "--from", str(timeless)], cwd=memrepo.path)
    assert result.code == 0, result.err
    assert re.search(r"P1: The user reviews every pull request\. \(origin: claude · \S+/user_role\.md:4 · written "
                     r"unknown · key ", memrepo.read("DECISIONS.md"))


def test_a_secret_in_the_source_folders_path_reaches_no_memory_file_and_no_output(memrepo: GitRepo, cli: Cli,
                                                                                  tmp_path: Path) -> None:
    where = tmp_path / TOKEN          # a folder a token was pasted into the name of
    put(where, {"user_role.md": "---\ntype: user\n---\nThe user reviews every pull request.\n"})
    planned = cli(["import", "claude", "--from", str(where), "--dry-run", "--json"], cwd=memrepo.path)
    assert planned.code == 0, planned.err
    assert TOKEN not in planned.out and json.loads(planned.out)["read"] == [str(tmp_path / "***")]
    done = cli(["import", "claude", "--from", str(where), "--json"], cwd=memrepo.path)
    assert done.code == 0, done.err
    assert TOKEN not in done.out and TOKEN not in "".join(memory(memrepo))
    assert cli(["check", "--worktree"], cwd=memrepo.path).code == 0
    put(where, {"user_bad.md": b"caf\xe9\n"})
    refused = cli(["import", "claude", "--from", str(where)], cwd=memrepo.path)
    assert refused.code == 1 and f"{tmp_path / '***'}/user_bad.md:1: GM950 is not UTF-8" in refused.err
    assert TOKEN not in refused.err + refused.out


def _gemini(place: Path, bullet: str) -> None:
    put(place / ".gemini", {"GEMINI.md": f"## Gemini Added Memories\n- {bullet}\n"})


def test_a_fact_edited_back_to_an_earlier_text_supersedes_the_text_in_force(memrepo: GitRepo, cli: Cli,
                                                                            home: Path) -> None:  # noqa: F811
    for number, bullet in enumerate(["My preferred language is Python.", "My preferred language is Python 3.",
                                     "My preferred language is Python."], 1):
        _gemini(home, bullet)
        result = cli(["import", "gemini", "--json"], cwd=memrepo.path)
        assert result.code == 0, result.err
        proposals = json.loads(result.out)["proposals"]
        assert [(p["text"], p["supersedes"]) for p in proposals] == [
            (bullet, f"D-000{number - 1} P1" if number > 1 else None)], f"import {number}"
        commit_all(memrepo)
    before = memory(memrepo)
    again = json.loads(cli(["import", "gemini", "--json"], cwd=memrepo.path).out)
    assert again["proposals"] == [] and memory(memrepo) == before


def test_a_lesson_edited_back_is_a_new_lesson_but_one_the_human_retired_stays_retired(memrepo: GitRepo, cli: Cli,
                                                                                      home: Path) -> None:  # noqa: F811
    where = claude_dir(home, memrepo)
    topic = "---\nname: tabs\ntype: feedback\n---\n{}\n"
    for text in ("Indent Makefiles with tabs.", "Indent Makefiles with tabs, never spaces.",
                 "Indent Makefiles with tabs."):
        put(where, {"feedback_tabs.md": topic.format(text)})
        assert cli(["import", "claude"], cwd=memrepo.path).code == 0
        commit_all(memrepo)
    lessons, _ = memory(memrepo)
    assert lessons.count("## L-") == 3 and "- Replaces: L-0002 (its text was edited in claude)" in lessons
    assert "- Status: retired — superseded by L-0003" in lessons
    assert cli(["check", "--worktree"], cwd=memrepo.path).code == 0
    # The human rejects the lesson in force: importing the same text again brings nothing back.
    memrepo.write("LESSONS.md", lessons[:lessons.index("## L-0003")] + lessons[lessons.index("## L-0003"):].replace(
        "- Status: open", "- Status: retired — not how we work"))
    commit_all(memrepo)
    before = memory(memrepo)
    again = json.loads(cli(["import", "claude", "--json"], cwd=memrepo.path).out)
    assert again["lessons"] == [] and memory(memrepo) == before


def test_a_rule_promoted_from_an_imported_lesson_is_exported_with_that_lessons_origin(
        memrepo: GitRepo, cli: Cli, home: Path, tmp_path: Path) -> None:  # noqa: F811
    put(claude_dir(home, memrepo), {"feedback_tabs.md": "---\nname: tabs\ntype: feedback\n---\n"
                                                        "Indent Makefiles with tabs.\n"})
    origin = json.loads(cli(["import", "claude", "--json"], cwd=memrepo.path).out)["lessons"][0]["origin"]
    # The daily close promotes the lesson after two confirmations: the rule names it, the lesson says so.
    memrepo.write("LESSONS.md", memrepo.read("LESSONS.md").replace("- Status: open", "- Status: promoted R-01"))
    memrepo.write("RULES.md", memrepo.read("RULES.md").replace(
        "## Proven rules\n", "## Proven rules\n- R-01 · Indent Makefiles with tabs. (from L-0001; cycles 2, 3)\n"))
    for fmt in ("agent-memory-repo", "claude", "codex", "gemini"):
        out = tmp_path / fmt
        exported = cli(["export", "--to", fmt, "--out", str(out), "--json"], cwd=memrepo.path)
        assert exported.code == 0, exported.err
        assert json.loads(exported.out)["entries"] == ["R-01"]
        text = " ".join(" ".join(p.read_text(encoding="utf-8").split()) for p in out.glob("*.md"))
        assert "Indent Makefiles with tabs." in text and origin in text, fmt
        before = memory(memrepo)
        again = cli(["import", fmt, "--from", str(out), "--json"], cwd=memrepo.path)
        assert json.loads(again.out)["proposals"] == [] and memory(memrepo) == before, fmt


# Claude Code's own names for these paths: its `$E` (replace every UTF-16 code unit other than an ASCII letter or
# digit with `-`; past 200, cut and add the base-36 of the path's 32-bit `h*31+c` hash), as the pinned release
# (agent-cli/claude-code, 2.1.197) bundles it, run on each path under Node.js.
_DEEP = "/srv/" + "deep/" * 45 + "repo"
_LONG = "/srv/ünï/" + "long-name-" * 25 + "/café"


@pytest.mark.parametrize(("path", "name"), [
    ("/srv/repos/\U0001f642 notes", "-srv-repos----notes"),      # a character past U+FFFF is two code units
    (_DEEP, "-srv-" + "deep-" * 39 + "-3g0dfy"),
    (_LONG, "-srv--n--" + "long-name-" * 19 + "l-3elcia"),
])
def test_claude_names_a_long_or_astral_project_folder_as_claude_code_does(path: str, name: str) -> None:
    assert len(name) <= 210
    assert project_dir_name(Path(path)) == name


def test_a_repository_deeper_than_claude_codes_name_limit_finds_its_auto_memory(tmp_path: Path, cli: Cli,
                                                                                 home: Path) -> None:  # noqa: F811
    deep = tmp_path.joinpath(*["a-rather-long-folder-name"] * 9, "repo")
    deep.mkdir(parents=True)
    assert cli(["init", str(deep)], cwd=tmp_path).code == 0
    name = project_dir_name(deep)
    assert len(name) > 200 and name[:200] == re.sub(r"[^A-Za-z0-9]", "-", str(deep.resolve()))[:200]
    put(home / ".claude" / "projects" / name / "memory", {"user_role.md": "---\ntype: user\n---\nA deep fact.\n"})
    result = cli(["import", "claude", "--dry-run", "--json"], cwd=deep)
    assert result.code == 0, result.err
    assert [item["text"] for item in json.loads(result.out)["proposals"]] == ["A deep fact."]


@pytest.mark.parametrize("field", ['name: "deploy\\x07"', 'description: "\\e[2J clears the screen"',
                                   'metadata: {note: "\\x00"}'])
def test_a_control_character_a_yaml_escape_makes_in_a_frontmatter_names_the_source_file(
        memrepo: GitRepo, cli: Cli, home: Path, field: str) -> None:  # noqa: F811
    where = claude_dir(home, memrepo)
    put(where, {"user_role.md": f"---\ntype: user\n{field}\n---\n"})
    before = memory(memrepo)
    result = cli(["import", "claude"], cwd=memrepo.path)
    assert result.code == 1
    assert f"{where / 'user_role.md'}:2: GM951 has a frontmatter value holding " in result.err
    assert "nothing was imported" in result.err and memory(memrepo) == before


def test_an_entry_with_a_long_title_is_exported_again_over_its_own_files(memrepo: GitRepo, cli: Cli,
                                                                        tmp_path: Path) -> None:
    title = " ".join(["Word"] * 1_500)
    assert cli(["lesson", "add", "--title", title, "--happened", "h", "--why", "w", "--change", "c"],
               cwd=memrepo.path).code == 0
    out = tmp_path / "claude"
    for _ in range(2):
        exported = cli(["export", "--to", "claude", "--out", str(out)], cwd=memrepo.path)
        assert exported.code == 0, exported.err
    topic = (out / "gitmem-l-0001.md").read_text(encoding="utf-8")
    assert title in topic, "the entry itself is whole; only the one-line description is short"
    assert len(topic.split("\n")[2]) < 200


@pytest.mark.parametrize(("answer", "kept"), [("P2", ["P2"]), ("p1, P2.", ["P1", "P2"]), ("none", []),
                                              ("All", ["P1", "P2"]), ("yes, the docs one", ["P1", "P2"])])
def test_an_import_decision_exports_only_the_proposals_its_answer_accepted(
        memrepo: GitRepo, cli: Cli, home: Path, tmp_path: Path, answer: str, kept: list[str]) -> None:  # noqa: F811
    put(claude_dir(home, memrepo), {"project_a.md": "---\nname: a\ntype: project\n---\nThe API is versioned.\n",
                                    "reference_b.md": "---\nname: b\ntype: reference\n---\nDocs are in docs/.\n"})
    data = json.loads(cli(["import", "claude", "--json"], cwd=memrepo.path).out)
    texts = {f"P{number}": item["origin"] for number, item in enumerate(data["proposals"], 1)}
    assert cli(["decision", "answer", "D-0001", "--answer", answer], cwd=memrepo.path).code == 0
    for fmt in ("agent-memory-repo", "claude", "codex", "gemini"):
        out = tmp_path / fmt
        assert cli(["export", "--to", fmt, "--out", str(out)], cwd=memrepo.path).code == 0
        text = " ".join(" ".join(p.read_text(encoding="utf-8").split()) for p in out.glob("*.md"))
        assert [number for number, origin in texts.items() if origin in text] == kept, fmt
        assert f"Answer: {answer}" in text and "gitmem import claude` read" in text


def test_an_inbox_nested_past_any_cli_layout_is_named_not_walked_to_a_traceback(memrepo: GitRepo, cli: Cli,
                                                                                tmp_path: Path) -> None:
    memory_dir = tmp_path / "gemini-memory"
    put(memory_dir, {"MEMORY.md": "# Memory\n"})
    levels = [memory_dir / ".inbox" / "private" / "/".join(["a"] * depth) for depth in range(1, 1_101)]
    levels[0].parent.mkdir(parents=True)
    for level in levels:                   # 1,100 folders: deeper than Python's stack would walk
        level.mkdir()
    (levels[-1] / "x.patch").write_text("--- a/MEMORY.md\n+++ b/MEMORY.md\n@@ -0,0 +1 @@\n+deep\n", encoding="utf-8")
    before = memory(memrepo)
    try:
        result = cli(["import", "gemini", "--from", str(memory_dir), "--dry-run"], cwd=memrepo.path)
    finally:                               # removed here, bottom up: a recursive removal would fail on it too
        (levels[-1] / "x.patch").unlink()
        for level in reversed(levels):
            level.rmdir()
    assert result.code == 1, result.err
    assert "Traceback" not in result.err and "GM950 is a folder nested more than 16 deep" in result.err
    assert memory(memrepo) == before


@pytest.mark.parametrize("place", ["under-a-file", "dangling-link"])
def test_an_export_directory_that_cannot_be_made_is_gm953_not_a_traceback(memrepo: GitRepo, cli: Cli,
                                                                         tmp_path: Path, place: str) -> None:
    if place == "under-a-file":
        (tmp_path / "a-file").write_text("mine\n", encoding="utf-8")
        out = tmp_path / "a-file" / "memory"
    else:
        out = tmp_path / "link"
        out.symlink_to(tmp_path / "nowhere")
    result = cli(["export", "--to", "codex", "--out", str(out)], cwd=memrepo.path)
    assert result.code == 1, result.err
    assert f"{out}:1: GM953 cannot be made a directory" in result.err and "Traceback" not in result.err
    assert not (tmp_path / "nowhere").exists()


def test_an_exported_file_its_cli_wrote_to_since_is_left_alone_not_overwritten(memrepo: GitRepo, cli: Cli,
                                                                               tmp_path: Path) -> None:
    assert cli(["lesson", "add", "--title", "Pin the CLIs", "--happened", "h", "--why", "w", "--change", "c"],
               cwd=memrepo.path).code == 0
    out = tmp_path / "claude"
    assert cli(["export", "--to", "claude", "--out", str(out)], cwd=memrepo.path).code == 0
    again = cli(["export", "--to", "claude", "--out", str(out)], cwd=memrepo.path)
    assert again.code == 0, "an export's own unchanged files are rewritten"
    # Claude Code keeps its index in MEMORY.md: a memory it saves adds a line there, and a topic file.
    index = out / "MEMORY.md"
    index.write_text(index.read_text(encoding="utf-8") + "- [Build](build.md) — how to build\n", encoding="utf-8")
    (out / "build.md").write_text("---\nname: build\ntype: project\n---\nRun make.\n", encoding="utf-8")
    kept = index.read_bytes()
    refused = cli(["export", "--to", "claude", "--out", str(out)], cwd=memrepo.path)
    assert refused.code == 1
    assert f"{index}:1: GM953 was written to since gitmem exported it" in refused.err
    assert index.read_bytes() == kept
    # The way the hint gives: import what Claude Code added, move the index away, export again.
    imported = json.loads(cli(["import", "claude", "--from", str(out), "--json"], cwd=memrepo.path).out)
    assert [item["text"] for item in imported["proposals"]] == ["Run make."]
    index.unlink()
    assert cli(["export", "--to", "claude", "--out", str(out)], cwd=memrepo.path).code == 0


def test_the_same_memory_in_two_files_of_a_source_lands_once(memrepo: GitRepo, cli: Cli, home: Path) -> None:  # noqa: F811
    # Codex's MEMORY.md (the registry) repeats what its raw_memories.md holds; Gemini CLI's two GEMINI.md too.
    put(home / ".codex" / "memories", {"raw_memories.md": "- `uv sync` fails offline; use the venv's pip\n",
                                       "MEMORY.md": "# Registry\n- `uv sync`  fails offline; use the venv's pip\n"})
    first = json.loads(cli(["import", "codex", "--json"], cwd=memrepo.path).out)
    assert len(first["lessons"]) == 1
    assert [item["reason"] for item in first["skipped"]] == ["the same text again, from another file of this import"]
    commit_all(memrepo)
    put(home / ".codex" / "memories", {"rollout_summaries/t2.md": "- `uv sync` fails offline; use the venv's pip\n"})
    again = json.loads(cli(["import", "codex", "--json"], cwd=memrepo.path).out)
    assert again["lessons"] == [] and "the same text is already imported (L-0001)" in [
        item["reason"] for item in again["skipped"]]
    assert memory(memrepo)[0].count("## L-") == 1


def test_a_memory_bank_made_a_link_out_of_the_repository_is_named_not_read(memrepo: GitRepo, cli: Cli,
                                                                           tmp_path: Path) -> None:
    put(tmp_path / "private", {"notes.md": "- the private plans\n"})
    (memrepo.path / "memory-bank").symlink_to(tmp_path / "private", target_is_directory=True)
    before = memory(memrepo)
    result = cli(["import", "cline", "--dry-run"], cwd=memrepo.path)
    assert result.code == 1
    assert f"{memrepo.path / 'memory-bank'}:1: GM950 is a symbolic link out of its directory" in result.err
    assert "private plans" not in result.out and memory(memrepo) == before
    # Named with --from, the folder is the one the user chose, as every source's override is.
    chosen = cli(["import", "cline", "--from", str(tmp_path / "private"), "--dry-run"], cwd=memrepo.path)
    assert chosen.code == 0 and "the private plans" in chosen.out


@pytest.mark.parametrize("url,shown", [
    ("postgres://admin:hunter2hunter2@db.internal:5432/prod", "postgres://admin:***@db.internal:5432/prod"),
    ("https://deploy:p%40ss:w0rd@git.example.com/a.git", "https://deploy:***@git.example.com/a.git"),
    ("redis://:Redis-Only-Pass@cache:6379/0", "redis://:***@cache:6379/0"),
])
def test_a_password_in_a_connection_url_of_a_source_reaches_no_memory_file(memrepo: GitRepo, cli: Cli,
                                                                           home: Path, url: str,  # noqa: F811
                                                                           shown: str) -> None:
    password = url.split("@")[0].split(":", 2)[2]
    put(claude_dir(home, memrepo), {"project_db.md": f"---\nname: db\ndescription: {url}\ntype: project\n---\n"
                                                     f"The production database is {url}\n"})
    planned = cli(["import", "claude", "--dry-run", "--json"], cwd=memrepo.path)
    assert planned.code == 0, planned.err
    assert password not in planned.out
    done = cli(["import", "claude"], cwd=memrepo.path)
    assert done.code == 0, done.err
    assert password not in done.out + done.err and password not in "".join(memory(memrepo))
    assert f"The production database is {shown}" in memory(memrepo)[1]     # the rest of the URL stays readable
    assert cli(["check", "--worktree"], cwd=memrepo.path).code == 0
    assert "Nothing new to import." in cli(["import", "claude"], cwd=memrepo.path).out


def test_a_password_assignment_in_a_source_reaches_no_memory_file_and_prose_about_passwords_stays(
        memrepo: GitRepo, cli: Cli, home: Path) -> None:  # noqa: F811
    passwords = ("hunter2hunter2", "Tr0ub4dor-3", "c0rrect-h0rse", "sw0rdfish-9")
    put(claude_dir(home, memrepo), {"project_staging.md": (
        "---\nname: staging\ndescription: the staging box\ntype: project\n---\n"
        f"Staging admin login, password: {passwords[0]}\n\n"
        f"The smtp relay takes passwd={passwords[1]} from the deploy script.\n\n"
        f"The vault token: pwd: {passwords[2]}\n\n"
        f"The webhook secret: {passwords[3]}\n\n"
        "The password policy asks for 12 characters; reset your password every 90 days.\n")})
    done = cli(["import", "claude"], cwd=memrepo.path)
    assert done.code == 0, done.err
    written = "".join(memory(memrepo))
    assert [p for p in passwords if p in done.out + done.err + written] == []
    assert "Staging admin login, password: ***" in written and "passwd=*** from the deploy script" in written
    assert "The password policy asks for 12 characters; reset your password every 90 days." in written
    assert cli(["check", "--worktree"], cwd=memrepo.path).code == 0


@pytest.mark.parametrize("form", ["NFD", "NFC"])
def test_a_source_saved_again_in_another_unicode_form_adds_nothing(memrepo: GitRepo, cli: Cli, home: Path,  # noqa: F811
                                                                    form: str) -> None:
    """macOS and some editors save `é` as `e` and a combining accent (NFD): the same text, the same fact."""
    where = home / "amr"
    text = "- The café API keys résumé ids by Zoë's rule [source: notes; added: 2026-12-01]\n"
    first, then = ("NFC", "NFD") if form == "NFD" else ("NFD", "NFC")
    put(where, {"MEMORY.md": "# Memory\n\n## Index\n\n" + unicodedata.normalize(first, text)})
    assert cli(["import", "agent-memory-repo", "--from", str(where)], cwd=memrepo.path).code == 0
    commit_all(memrepo)
    before = memory(memrepo)
    put(where, {"MEMORY.md": "# Memory\n\n## Index\n\n" + unicodedata.normalize(then, text)})
    again = cli(["import", "agent-memory-repo", "--from", str(where)], cwd=memrepo.path)
    assert again.code == 0, again.err
    assert "Nothing new to import." in again.out
    assert memory(memrepo) == before


def test_a_day_written_that_has_not_begun_anywhere_is_an_unknown_day(memrepo: GitRepo, cli: Cli, home: Path,  # noqa: F811
                                                                     tmp_path: Path) -> None:
    """A file time set ahead (`touch -d 2099-03-01`, a fast clock) or an `added:` day ahead is no day the fact
    was written: the origin says `written unknown`, as for a time no calendar holds; today's stays."""
    ahead = 4_076_006_400                                  # 2099-03-01 UTC
    where = tmp_path / "claude"
    put(where, {"feedback_sorted.md": "---\ntype: feedback\n---\nKeep the changelog sorted by date.\n",
                "user_role.md": "---\ntype: user\n---\nThe user reviews every pull request.\n"})
    os.utime(where / "feedback_sorted.md", (ahead, ahead))
    os.utime(where / "user_role.md", None)                 # now: written today
    assert cli(["import", "claude", "--from", str(where)], cwd=memrepo.path).code == 0
    lessons, decisions = memory(memrepo)
    assert "2099" not in lessons and "written there an unknown day" in lessons
    assert re.search(r"- Origin: claude · \S+/feedback_sorted\.md:4 · written unknown · key ", lessons)
    assert re.search(r"user_role\.md:4 · written 20[0-9]{2}-[0-9]{2}-[0-9]{2} · key ", decisions)
    put(tmp_path / "amr", {"MEMORY.md": "# Memory\n\n## Index\n\n- Releases are cut on Thursdays "
                                        "[source: notes; added: 2099-03-01]\n"})
    assert cli(["import", "agent-memory-repo", "--from", str(tmp_path / "amr")], cwd=memrepo.path).code == 0
    assert "2099" not in memory(memrepo)[1]
    assert cli(["check", "--worktree"], cwd=memrepo.path).code == 0


def test_an_index_line_is_dropped_only_for_a_topic_file_that_holds_it(memrepo: GitRepo, cli: Cli, home: Path,  # noqa: F811
                                                                        tmp_path: Path) -> None:
    """A MEMORY.md line that links a topic file there is that file's entry; one that links a web page's `.md` or
    a topic file that is gone holds the only copy of its fact, which lands as any other index line."""
    where = tmp_path / "claude"
    put(where, {"MEMORY.md": "# Memory\n- [Role](user_role.md) — data scientist\n"
                             "- Follow [CONTRIBUTING](https://example.com/a/b/CONTRIBUTING.md) for every pull request\n"
                             "- [Deploys](feedback_deploys.md) — deploys need a second reviewer\n",
                "user_role.md": "---\ntype: user\n---\nThe user is a data scientist.\n"})
    planned = cli(["import", "claude", "--from", str(where), "--dry-run", "--json"], cwd=memrepo.path)
    assert planned.code == 0, planned.err
    texts = [item["text"] for item in json.loads(planned.out)["proposals"]]
    assert texts == ["Follow [CONTRIBUTING](https://example.com/a/b/CONTRIBUTING.md) for every pull request",
                     "[Deploys](feedback_deploys.md) — deploys need a second reviewer",
                     "The user is a data scientist."]


def test_an_exported_index_line_whose_topic_file_is_gone_still_imports_as_nothing(memrepo: GitRepo, cli: Cli,
                                                                                  tmp_path: Path) -> None:
    """Claude Code may delete a topic file the export wrote: the index line left names its entry, so importing the
    export back still adds nothing."""
    assert cli(["lesson", "add", "--title", "Pin the CLI versions", "--happened", "a release broke CI", "--why",
                "an unpinned install", "--change", "pin every agent CLI with its lock"], cwd=memrepo.path).code == 0
    commit_all(memrepo)
    out = tmp_path / "out"
    assert cli(["export", "--to", "claude", "--out", str(out)], cwd=memrepo.path).code == 0
    (out / "gitmem-l-0001.md").unlink()
    before = memory(memrepo)
    again = cli(["import", "claude", "--from", str(out)], cwd=memrepo.path)
    assert again.code == 0, again.err
    assert "Nothing new to import." in again.out and memory(memrepo) == before


@pytest.mark.parametrize("fmt", ["agent-memory-repo", "claude", "codex", "gemini"])
def test_an_entry_quoting_another_entrys_tag_still_imports_back_as_nothing(memrepo: GitRepo, cli: Cli,
                                                                           tmp_path: Path, fmt: str) -> None:
    """The tag an export ends an entry's line with names the entry; a `[gitmem: L-0777]` its text quotes does not
    (an entry this repository lacks would make the export import back as a new fact)."""
    assert cli(["lesson", "add", "--title", "Quote the tags", "--happened", "a review", "--why", "history",
                "--change", "keep [gitmem: L-0777] in a quote as written"], cwd=memrepo.path).code == 0
    commit_all(memrepo)
    out = tmp_path / "out"
    assert cli(["export", "--to", fmt, "--out", str(out)], cwd=memrepo.path).code == 0
    before = memory(memrepo)
    again = cli(["import", fmt, "--from", str(out)], cwd=memrepo.path)
    assert again.code == 0, again.err
    assert "Nothing new to import." in again.out and memory(memrepo) == before
