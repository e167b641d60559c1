"""`gitmem export --to FORMAT` and the round trips with `gitmem import`, in a real repo."""
from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from gitmem.interop.claude_code import project_dir_name
from tests.interop.test_interop_import import FEEDBACK, INDEX, USER, claude_dir, home, put  # noqa: F401 (fixture)
from tests.support.helpers import CliResult, GitRepo

Cli = Callable[..., CliResult]
FORMATS = ("agent-memory-repo", "claude", "codex", "gemini")
SOURCE_OF = {"agent-memory-repo": "agent-memory-repo", "claude": "claude", "codex": "codex", "gemini": "gemini"}
RULE = "- R-01 · Run the tests before every push (human)\n"


def memory(repo: GitRepo) -> tuple[str, ...]:
    return tuple(repo.read(name) for name in ("LESSONS.md", "DECISIONS.md", "RULES.md", "NOW.md"))


def fill(repo: GitRepo, cli: Cli) -> None:
    """A rule, an open lesson, a resolved decision and a NOW block, written as the human and the agent do."""
    rules = repo.read("RULES.md").replace("## Proven rules\n", "## Proven rules\n" + RULE)
    repo.write("RULES.md", rules)
    assert cli(["lesson", "add", "--title", "Pin the CLI versions", "--happened", "a release broke CI",
                "--why", "an unpinned npm install", "--change", "pin every agent CLI with its lock"],
               cwd=repo.path).code == 0
    assert cli(["decision", "ask", "--title", "Ship on Fridays?", "--recommendation", "no"], cwd=repo.path).code == 0
    assert cli(["decision", "answer", "D-0001", "--answer", "no, Thursdays"], cwd=repo.path).code == 0
    assert cli(["log", "add", "--task", "t", "--outcome", "built", "--result", "r"], cwd=repo.path).code == 0
    assert cli(["now", "add", "--did", "pinned the CLIs", "--human", "nothing", "--next", "the export"],
               cwd=repo.path).code == 0
    repo.stage("RULES.md", "LESSONS.md", "DECISIONS.md", "LOG.md", "NOW.md")
    repo.commit("memory")


@pytest.mark.parametrize("fmt", FORMATS)
def test_export_then_import_adds_nothing(memrepo: GitRepo, cli: Cli, home: Path, tmp_path: Path,  # noqa: F811
                                         fmt: str) -> None:
    fill(memrepo, cli)
    out = tmp_path / "out"
    exported = cli(["export", "--to", fmt, "--out", str(out), "--json"], cwd=memrepo.path)
    assert exported.code == 0, exported.err
    assert json.loads(exported.out)["entries"] == ["R-01", "L-0001", "D-0001", "NOW"]
    text = "".join(p.read_text(encoding="utf-8") for p in sorted(out.glob("*.md")))
    assert f"exported by gitmem from {memrepo.path}" in text           # the pointer back to the record
    for expected in ("Run the tests before every push", "Pin the CLI versions", "Answer: no, Thursdays",
                     "Did: pinned the CLIs"):
        assert expected in text
    before = memory(memrepo)
    again = cli(["import", SOURCE_OF[fmt], "--from", str(out)], cwd=memrepo.path)
    assert again.code == 0, again.err
    assert "Nothing new to import." in again.out
    assert memory(memrepo) == before


def test_import_then_export_keeps_every_imported_fact_and_its_origin(memrepo: GitRepo, cli: Cli,
                                                                     home: Path, tmp_path: Path) -> None:  # noqa: F811
    put(claude_dir(home, memrepo), {"MEMORY.md": INDEX, "feedback_real-database.md": FEEDBACK,
                                    "user_role.md": USER})
    data = json.loads(cli(["import", "claude", "--json"], cwd=memrepo.path).out)
    assert cli(["decision", "answer", "D-0001", "--answer", "all"], cwd=memrepo.path).code == 0
    for fmt in FORMATS:
        out = tmp_path / fmt
        assert cli(["export", "--to", fmt, "--out", str(out)], cwd=memrepo.path).code == 0
        text = " ".join(" ".join(p.read_text(encoding="utf-8").split()) for p in out.glob("*.md"))
        for item in (*data["lessons"], *data["proposals"]):
            assert " ".join(item["text"].split()) in text, (fmt, item["text"])
            assert item["origin"] in text, (fmt, item["origin"])


def test_an_unaccepted_proposal_is_not_exported(memrepo: GitRepo, cli: Cli, home: Path,  # noqa: F811
                                                tmp_path: Path) -> None:
    put(home / ".gemini", {"GEMINI.md": "## Gemini Added Memories\n- Prefers tabs.\n"})
    assert cli(["import", "gemini"], cwd=memrepo.path).code == 0
    assert cli(["export", "--to", "codex", "--out", str(tmp_path / "x")], cwd=memrepo.path).code == 0
    assert "Prefers tabs" not in (tmp_path / "x" / "MEMORY.md").read_text(encoding="utf-8")


def test_an_accepted_proposal_an_accepted_edit_replaced_is_not_exported(memrepo: GitRepo, cli: Cli,
                                                                        tmp_path: Path) -> None:
    bank = tmp_path / "bank"
    put(bank, {"context.md": "- The staging database is Postgres 15\n- Deploys go out on Thursdays\n"})
    assert cli(["import", "cline", "--from", str(bank)], cwd=memrepo.path).code == 0
    assert cli(["decision", "answer", "D-0001", "--answer", "all"], cwd=memrepo.path).code == 0
    put(bank, {"context.md": "- The staging database is Postgres 16\n- Deploys go out on Thursdays\n"})
    assert "supersedes D-0001 P1" in cli(["import", "cline", "--from", str(bank)], cwd=memrepo.path).out

    def exported() -> str:
        assert cli(["export", "--to", "codex", "--out", str(tmp_path / "x")], cwd=memrepo.path).code == 0
        return (tmp_path / "x" / "MEMORY.md").read_text(encoding="utf-8")

    # Until the edit is accepted, the text accepted before stays in force; once it is, only the edit is.
    assert "Postgres 15" in exported() and "Postgres 16" not in exported()
    assert cli(["decision", "answer", "D-0002", "--answer", "P1"], cwd=memrepo.path).code == 0
    text = exported()
    assert "Postgres 16" in text and "Postgres 15" not in text and "Deploys go out on Thursdays" in text


def test_export_never_overwrites_a_file_it_did_not_write(memrepo: GitRepo, cli: Cli, home: Path,  # noqa: F811
                                                        tmp_path: Path) -> None:
    fill(memrepo, cli)
    out = tmp_path / "out"
    put(out, {"GEMINI.md": "# My own notes\n"})
    refused = cli(["export", "--to", "gemini", "--out", str(out)], cwd=memrepo.path)
    assert refused.code == 1
    assert f"{out / 'GEMINI.md'}:1: GM953 is not a file gitmem exported; left alone" in refused.err
    assert (out / "GEMINI.md").read_text(encoding="utf-8") == "# My own notes\n"
    (out / "GEMINI.md").unlink()
    (out / "GEMINI.md").symlink_to(tmp_path / "target.md")
    linked = cli(["export", "--to", "gemini", "--out", str(out)], cwd=memrepo.path)
    assert linked.code == 1 and "GM953" in linked.err and not (tmp_path / "target.md").exists()


@pytest.mark.parametrize("link", ["docs/memory", "docs"])
def test_an_export_into_the_repository_writes_nothing_through_a_link_planted_on_the_way(
        memrepo: GitRepo, cli: Cli, tmp_path: Path, link: str) -> None:
    """An agent can plant a link in the work tree: `--out docs/memory` must not write where it leads (another
    project's Claude Code memory folder, say), as import never reads a folder in the repository through one."""
    fill(memrepo, cli)
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "memory").mkdir(parents=True)
    (memrepo.path / link).parent.mkdir(parents=True, exist_ok=True)
    (memrepo.path / link).symlink_to(elsewhere if link == "docs" else elsewhere / "memory")
    refused = cli(["export", "--to", "codex", "--out", "docs/memory"], cwd=memrepo.path)
    assert refused.code == 1, refused.out
    assert f"docs/memory/MEMORY.md:1: GM953 is inside {link}, which is a symbolic link" in refused.err
    assert not list(elsewhere.rglob("*.md"))
    (memrepo.path / link).unlink()
    done = cli(["export", "--to", "codex", "--out", "docs/memory"], cwd=memrepo.path)   # a plain folder: written
    assert done.code == 0, done.err
    assert (memrepo.path / "docs" / "memory" / "MEMORY.md").is_file()


def test_a_second_export_rewrites_its_own_files_and_drops_the_ones_no_longer_in_force(
        memrepo: GitRepo, cli: Cli, home: Path, tmp_path: Path) -> None:  # noqa: F811
    fill(memrepo, cli)
    out = tmp_path / "out"
    put(out, {"notes.md": "mine\n"})
    assert cli(["export", "--to", "claude", "--out", str(out)], cwd=memrepo.path).code == 0
    assert (out / "gitmem-l-0001.md").exists()
    memrepo.write("LESSONS.md", memrepo.read("LESSONS.md").replace("- Status: open", "- Status: retired — wrong"))
    assert cli(["export", "--to", "claude", "--out", str(out)], cwd=memrepo.path).code == 0
    assert not (out / "gitmem-l-0001.md").exists()
    assert (out / "notes.md").read_text(encoding="utf-8") == "mine\n"
    assert "gitmem-l-0001.md" not in (out / "MEMORY.md").read_text(encoding="utf-8")


def test_cli_location_is_only_written_when_asked(memrepo: GitRepo, cli: Cli, home: Path) -> None:  # noqa: F811
    fill(memrepo, cli)
    neither = cli(["export", "--to", "claude"], cwd=memrepo.path)
    assert neither.code == 2 and "--out DIR or --cli-location" in neither.err
    assert cli(["export", "--to", "claude", "--cli-location"], cwd=memrepo.path).code == 0
    where = home / ".claude" / "projects" / project_dir_name(memrepo.path) / "memory"
    assert (where / "MEMORY.md").exists() and (where / "gitmem-r-01.md").exists()
    assert cli(["import", "claude"], cwd=memrepo.path).out.strip().endswith("Nothing new to import.")


def test_a_fact_naming_an_entry_this_repository_lacks_is_imported(memrepo: GitRepo, cli: Cli, home: Path,  # noqa: F811
                                                                  tmp_path: Path) -> None:
    put(home / ".gemini", {"GEMINI.md": "## Gemini Added Memories\n- Copied from elsewhere [gitmem: L-0999]\n"})
    result = cli(["import", "gemini", "--json"], cwd=memrepo.path)
    assert [p["text"] for p in json.loads(result.out)["proposals"]] == ["Copied from elsewhere [gitmem: L-0999]"]


def test_an_export_masks_the_environments_secrets(memrepo: GitRepo, cli: Cli, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Another CLI's memory is output like any other: a secret value in a lesson is masked as recall masks it."""
    fill(memrepo, cli)
    monkeypatch.setenv("GITHUB_TOKEN", "Sup3rS3cretValue99")
    lessons = memrepo.read("LESSONS.md").replace("pin every agent CLI with its lock",
                                                 "pin every agent CLI with its lock, token Sup3rS3cretValue99")
    memrepo.write("LESSONS.md", lessons)
    memrepo.stage("LESSONS.md")
    memrepo.commit("a secret in a lesson")
    out = tmp_path / "out"
    assert cli(["export", "--to", "claude", "--out", str(out)], cwd=memrepo.path).code == 0
    text = "".join(p.read_text(encoding="utf-8") for p in sorted(out.rglob("*.md")))
    assert "Sup3rS3cretValue99" not in text and "token ***" in text


def test_an_agent_memory_repo_has_no_cli_location_and_nothing_is_written(memrepo: GitRepo, cli: Cli,
                                                                          home: Path) -> None:  # noqa: F811
    refused = cli(["export", "--to", "agent-memory-repo", "--cli-location"], cwd=memrepo.path)
    assert refused.code == 2 and refused.err.strip() == ("gitmem: agent-memory-repo has no place a CLI reads it "
                                                          "from: give --out DIR")
    assert not any(home.rglob("*.md"))


def test_the_export_is_the_librarys_one_call(memrepo: GitRepo, cli: Cli, home: Path,  # noqa: F811
                                              tmp_path: Path) -> None:
    from gitmem.interop.export import NoCliMemoryDir, cli_memory_dir, export_memory
    from gitmem.workspace import Workspace

    fill(memrepo, cli)
    ws = Workspace.at(memrepo.path)
    with pytest.raises(NoCliMemoryDir):
        cli_memory_dir(ws, "agent-memory-repo", {}, home)
    assert cli_memory_dir(ws, "codex", {}, home) == home / ".codex" / "memories"
    done = export_memory(ws, "codex", tmp_path / "out")
    assert done.files == ["MEMORY.md", "memory_summary.md"] and done.directory == tmp_path / "out"
    assert [item.ref for item in done.entries] == ["R-01", "L-0001", "D-0001", "NOW"]
    assert "[gitmem: L-0001]" in (tmp_path / "out" / "MEMORY.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_export_never_writes_over_or_removes_another_memorys_export(
        memrepo: GitRepo, cli: Cli, home: Path, tmp_path: Path, fmt: str) -> None:  # noqa: F811
    """A folder several memories export to (a CLI's place every project shares, one `--out` for all): the second
    memory's export wrote over the first's files (they carry the marker, so they looked like its own) and
    removed its topic files. Another memory's export is left alone and named; the first's own re-export works."""
    from tests.support.helpers import make_repo

    fill(memrepo, cli)
    shared = tmp_path / "shared"
    assert cli(["export", "--to", fmt, "--out", str(shared)], cwd=memrepo.path).code == 0
    before = {p.name: p.read_bytes() for p in shared.iterdir()}
    other = make_repo(tmp_path / "other")
    refused = cli(["export", "--to", fmt, "--out", str(shared)], cwd=other.path)
    assert refused.code == 1, (refused.out, refused.err)
    assert f"GM953 is the export of another memory ({memrepo.path}); left alone" in refused.out + refused.err
    assert {p.name: p.read_bytes() for p in shared.iterdir()} == before
    assert cli(["export", "--to", fmt, "--out", str(shared)], cwd=memrepo.path).code == 0


@pytest.mark.parametrize(("first", "second"), [("claude", "codex"), ("codex", "claude"),
                                                ("claude", "agent-memory-repo"), ("agent-memory-repo", "codex")])
def test_a_second_format_into_the_same_folder_is_refused_unless_forced(memrepo: GitRepo, cli: Cli, tmp_path: Path,
                                                                       first: str, second: str) -> None:
    """`export --to claude --out DIR` then `--to codex --out DIR`: the second replaced the first's MEMORY.md (and
    codex's export removed claude's topic files as its own stale ones). Now GM953 names the file and the format it
    belongs to, nothing is written; --force replaces only that export's unchanged files, never a human's."""
    fill(memrepo, cli)
    out = tmp_path / "out"
    assert cli(["export", "--to", first, "--out", str(out)], cwd=memrepo.path).code == 0
    before = {path.name: path.read_bytes() for path in out.iterdir()}
    refused = cli(["export", "--to", second, "--out", str(out)], cwd=memrepo.path)
    assert refused.code == 1 and refused.out == ""
    assert f"{out / 'MEMORY.md'}:1: GM953 is this memory's {first} export, which {second} would replace; " \
           "left alone [export-target-refused]" in refused.err, refused.err
    assert {path.name: path.read_bytes() for path in out.iterdir()} == before
    forced = cli(["export", "--to", second, "--out", str(out), "--force"], cwd=memrepo.path)
    assert forced.code == 0, forced.err
    assert f" · format {second} · sha256 " in (out / "MEMORY.md").read_text(encoding="utf-8")
    assert {name for name in before if name.startswith("gitmem-")} <= {path.name for path in out.iterdir()}


def test_force_never_replaces_a_file_the_human_wrote_or_changed(memrepo: GitRepo, cli: Cli, tmp_path: Path) -> None:
    fill(memrepo, cli)
    out = tmp_path / "out"
    out.mkdir()
    (out / "MEMORY.md").write_text("# My own notes\n", encoding="utf-8")
    assert cli(["export", "--to", "codex", "--out", str(out), "--force"], cwd=memrepo.path).code == 1
    assert (out / "MEMORY.md").read_text(encoding="utf-8") == "# My own notes\n"
    (out / "MEMORY.md").unlink()
    assert cli(["export", "--to", "claude", "--out", str(out)], cwd=memrepo.path).code == 0
    with (out / "MEMORY.md").open("a", encoding="utf-8") as handle:
        handle.write("- a line the human added\n")
    assert cli(["export", "--to", "codex", "--out", str(out), "--force"], cwd=memrepo.path).code == 1
    assert (out / "MEMORY.md").read_text(encoding="utf-8").endswith("- a line the human added\n")
