"""`gitmem import gemini` beyond `## Gemini Added Memories`: the project's private memory found where Gemini CLI
keeps it, its inbox of proposed patches, and a batch too large for Pending refused whole.

The fixtures follow google-gemini/gemini-cli as the pinned release (agent-cli/gemini-cli) bundles it:
- packages/core/src/config/storage.ts (getProjectMemoryTempDir: `<gemini>/tmp/<id>/memory`, `<gemini>` from
  GEMINI_CLI_HOME or the home directory, packages/core/src/utils/paths.ts homedir) and
  packages/core/src/config/projectRegistry.ts (`projects.json` as `{"projects": {path: slug}}`, slugs
  `[a-z0-9-]+`, the `.project_root` owner mark in `<gemini>/tmp/<slug>/`, the SHA-256 folders of older releases);
- packages/core/src/services/memoryPatchUtils.ts (the inbox `<memory dir>/.inbox/{private,global}/`) and
  packages/core/src/agents/skill-extraction-agent.ts (one `extraction.patch` per kind; unified diffs with absolute
  `---`/`+++` paths, `/dev/null` for a new file, a new sibling file paired with a MEMORY.md pointer hunk, the
  global kind targeting ~/.gemini/GEMINI.md only).
"""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from tests.interop.test_interop_import import TOKEN, Cli, commit_all, memory, put
from tests.support.helpers import GitRepo

MEMORY_INDEX = "# Project memory\n- The staging deploy needs the VPN.\n"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    place = tmp_path / "home"
    place.mkdir()
    monkeypatch.setenv("HOME", str(place))
    monkeypatch.delenv("GEMINI_CLI_HOME", raising=False)
    return place


def private_dir(home: Path, repo: GitRepo, slug: str = "agent") -> Path:
    return home / ".gemini" / "tmp" / slug / "memory"


def register(home: Path, repo: GitRepo, slug: str = "agent", *, owner: Path | None = None) -> None:
    """What Gemini CLI's project registry leaves: the slug in projects.json and its owner mark."""
    put(home / ".gemini", {"projects.json": json.dumps({"projects": {str(repo.path.resolve()): slug}})})
    put(home / ".gemini" / "tmp" / slug, {".project_root": str(owner or repo.path.resolve())})


def inbox_patches(memory_dir: Path, home: Path) -> dict[str, str]:
    """The extraction agent's two canonical patches: a new sibling file with its MEMORY.md pointer (private), and
    a line for the personal GEMINI.md (global)."""
    private = (f"--- /dev/null\n+++ {memory_dir}/debugging.md\n@@ -0,0 +1,2 @@\n+# Debugging\n"
               f"+Run the flaky suite with --runs 3 before calling it broken.\n"
               f"--- {memory_dir}/MEMORY.md\n+++ {memory_dir}/MEMORY.md\n@@ -1,2 +1,3 @@\n # Project memory\n"
               f" - The staging deploy needs the VPN.\n+- See {memory_dir}/debugging.md for the flaky suite.\n")
    gemini_md = home / ".gemini" / "GEMINI.md"
    glob = (f"--- {gemini_md}\n+++ {gemini_md}\n@@ -1,2 +1,3 @@\n ## Gemini Added Memories\n"
            f" - Prefers Python.\n+- Prefers short commit messages.\n")
    return {".inbox/private/extraction.patch": private, ".inbox/global/extraction.patch": glob}


def test_gemini_private_memory_is_found_where_gemini_cli_keeps_it(memrepo: GitRepo, cli: Cli, home: Path) -> None:
    register(home, memrepo)
    put(private_dir(home, memrepo), {"MEMORY.md": MEMORY_INDEX})
    result = cli(["import", "gemini"], cwd=memrepo.path)
    assert result.code == 0, result.err
    _, decisions = memory(memrepo)
    assert re.search(r"P1: The staging deploy needs the VPN\. \(origin: gemini · ~/\.gemini/tmp/agent/memory/"
                     r"MEMORY\.md:2 · written 2026-10-26 · key [0-9a-f]{12}\)", decisions), decisions


@pytest.mark.parametrize("layout", ["registry", "owner-mark", "older-hash", "gemini-cli-home"])
def test_the_private_memory_folder_is_located_as_gemini_cli_locates_it(memrepo: GitRepo, cli: Cli, home: Path,
                                                                       tmp_path: Path, monkeypatch, layout: str
                                                                       ) -> None:
    root = str(memrepo.path.resolve())
    gemini_home = home
    if layout == "registry":
        register(home, memrepo, "my-app")
        where = private_dir(home, memrepo, "my-app")
    elif layout == "owner-mark":          # no registry entry: the folder whose .project_root names the project
        put(home / ".gemini" / "tmp" / "other", {".project_root": "/somewhere/else"})
        put(home / ".gemini" / "tmp" / "my-app-1", {".project_root": root + "\n"})
        where = private_dir(home, memrepo, "my-app-1")
    elif layout == "older-hash":          # before the registry: the SHA-256 of the path
        where = home / ".gemini" / "tmp" / hashlib.sha256(root.encode()).hexdigest() / "memory"
    else:
        gemini_home = tmp_path / "gemini-home"
        monkeypatch.setenv("GEMINI_CLI_HOME", str(gemini_home))
        register(gemini_home, memrepo)
        where = private_dir(gemini_home, memrepo)
    put(where, {"MEMORY.md": MEMORY_INDEX})
    data = json.loads(cli(["import", "gemini", "--dry-run", "--json"], cwd=memrepo.path).out)
    assert [item["text"] for item in data["proposals"]] == ["The staging deploy needs the VPN."]
    assert data["proposals"][0]["file"].endswith("/memory/MEMORY.md")
    assert gemini_home.exists()


def test_a_registry_slug_whose_owner_mark_names_another_project_is_not_read(memrepo: GitRepo, cli: Cli,
                                                                            home: Path) -> None:
    register(home, memrepo, owner=Path("/another/project"))
    put(private_dir(home, memrepo), {"MEMORY.md": MEMORY_INDEX})
    put(home / ".gemini", {"GEMINI.md": "## Gemini Added Memories\n- Prefers Python.\n"})
    data = json.loads(cli(["import", "gemini", "--dry-run", "--json"], cwd=memrepo.path).out)
    assert [item["text"] for item in data["proposals"]] == ["Prefers Python."], "another project's memory stays out"


def test_inbox_patches_become_proposals_of_the_one_decision_and_are_never_applied(memrepo: GitRepo, cli: Cli,
                                                                                  home: Path) -> None:
    register(home, memrepo)
    folder = private_dir(home, memrepo)
    put(folder, {"MEMORY.md": MEMORY_INDEX, **inbox_patches(folder, home)})
    put(home / ".gemini", {"GEMINI.md": "## Gemini Added Memories\n- Prefers Python.\n"})
    sources_before = {p: p.read_bytes() for p in (home / ".gemini").rglob("*") if p.is_file()}
    dry = json.loads(cli(["import", "gemini", "--dry-run", "--json"], cwd=memrepo.path).out)
    inbox = [item for item in dry["proposals"] if "/.inbox/" in item["file"]]
    assert [(item["file"].split("/memory/")[1], item["line"], item["lands"]) for item in inbox] == [
        (".inbox/private/extraction.patch", 3, "DECISIONS"), (".inbox/global/extraction.patch", 3, "DECISIONS")]
    result = cli(["import", "gemini"], cwd=memrepo.path)
    assert result.code == 0, result.err
    lessons, decisions = memory(memrepo)
    pending = decisions.split("## Resolved")[0]
    assert pending.count("### D-") == 1 and "Accept 4 facts imported from gemini" in pending
    assert ("Gemini CLI proposes (private memory, not applied): debugging.md — adds: # Debugging / Run the flaky "
            "suite with --runs 3 before calling it broken. | MEMORY.md — adds: - See ") in pending
    assert re.search(r"\(origin: gemini · ~/\.gemini/tmp/agent/memory/\.inbox/private/extraction\.patch:3 · "
                     r"written 2026-10-26 · key [0-9a-f]{12}\)", pending)
    assert ("Gemini CLI proposes (global memory, not applied): GEMINI.md — adds: - Prefers short commit "
            "messages.") in pending
    assert "## L-" not in lessons, "a proposed patch is a proposal, never a lesson"
    assert {p: p.read_bytes() for p in (home / ".gemini").rglob("*") if p.is_file()} == sources_before, \
        "the patches are not applied, and nothing of Gemini CLI's is changed"
    assert cli(["check", "--worktree"], cwd=memrepo.path).code == 0
    commit_all(memrepo)
    again = cli(["import", "gemini"], cwd=memrepo.path)
    assert again.code == 0 and "Nothing new to import." in again.out


def test_an_inbox_patch_that_is_not_a_diff_is_gm955_and_nothing_is_imported(memrepo: GitRepo, cli: Cli,
                                                                            home: Path) -> None:
    register(home, memrepo)
    folder = private_dir(home, memrepo)
    put(folder, {"MEMORY.md": MEMORY_INDEX, ".inbox/private/extraction.patch": "remember to use pnpm\n",
                 ".inbox/private/empty.patch": ""})
    before = memory(memrepo)
    result = cli(["import", "gemini"], cwd=memrepo.path)
    assert result.code == 1
    assert re.search(r"\.inbox/private/extraction\.patch:1: GM955 is not a unified diff: it has no `@@` hunk",
                     result.err), result.err
    assert memory(memrepo) == before
    (folder / ".inbox" / "private" / "extraction.patch").unlink()
    data = json.loads(cli(["import", "gemini", "--dry-run", "--json"], cwd=memrepo.path).out)
    assert [(item["file"].rsplit("/", 1)[1], item["reason"]) for item in data["skipped"]] == [("empty.patch",
                                                                                              "empty")]


def test_a_link_in_the_inbox_is_named_not_followed(memrepo: GitRepo, cli: Cli, home: Path, tmp_path: Path) -> None:
    register(home, memrepo)
    folder = private_dir(home, memrepo)
    put(folder, {"MEMORY.md": MEMORY_INDEX})
    put(tmp_path / "elsewhere", {"x.patch": "--- /dev/null\n+++ /tmp/x.md\n@@ -0,0 +1 @@\n+secret plan\n"})
    (folder / ".inbox" / "private").mkdir(parents=True)
    (folder / ".inbox" / "private" / "linked").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    result = cli(["import", "gemini"], cwd=memrepo.path)
    assert result.code == 1 and "linked:1: GM950 is a symbolic link out of its directory" in result.err


@pytest.mark.parametrize("awkward", ["inbox-link", "not-utf8", "huge"])
def test_an_awkward_inbox_is_named_and_nothing_is_imported(memrepo: GitRepo, cli: Cli, home: Path, tmp_path: Path,
                                                           awkward: str) -> None:
    register(home, memrepo)
    folder = private_dir(home, memrepo)
    put(folder, {"MEMORY.md": MEMORY_INDEX})
    if awkward == "inbox-link":
        put(tmp_path / "elsewhere" / "private", {"x.patch": "--- /dev/null\n+++ /tmp/x.md\n@@ -0,0 +1 @@\n+plan\n"})
        (folder / ".inbox").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
        said = ".inbox:1: GM950 is a symbolic link out of its directory"
    elif awkward == "not-utf8":
        put(folder, {".inbox/private/extraction.patch": b"--- /dev/null\n+++ /x.md\n@@ -0,0 +1 @@\n+caf\xe9\n"})
        said = "extraction.patch:4: GM950 is not UTF-8"
    else:
        put(folder, {".inbox/global/extraction.patch": "--- /dev/null\n+++ /x.md\n@@ -0,0 +1 @@\n+" + "x" * 600_000})
        said = "extraction.patch:1: GM950 is 600"
    before = memory(memrepo)
    result = cli(["import", "gemini"], cwd=memrepo.path)
    assert result.code == 1 and said in result.err, result.err
    assert memory(memrepo) == before


def test_a_secret_in_a_proposed_patch_is_masked(memrepo: GitRepo, cli: Cli, home: Path) -> None:
    register(home, memrepo)
    folder = private_dir(home, memrepo)
    put(folder, {".inbox/private/extraction.patch": f"--- /dev/null\n+++ {folder}/deploy.md\n@@ -0,0 +1 @@\n"
                                                    f"+The deploy token is {TOKEN}\n"})
    assert cli(["import", "gemini"], cwd=memrepo.path).code == 0
    _, decisions = memory(memrepo)
    assert TOKEN not in decisions and "deploy.md — adds: The deploy token is" in decisions


def many_facts(home: Path, count: int) -> None:
    put(home / ".gemini", {"GEMINI.md": "## Gemini Added Memories\n" + "".join(
        f"- Fact {i}: the site build keeps its compiled assets in the folder cache-{i}, cleared on release.\n"
        for i in range(count))})


def test_a_batch_over_pendings_size_is_refused_whole_and_dry_run_and_json_say_so(memrepo: GitRepo, cli: Cli,
                                                                                 home: Path) -> None:
    many_facts(home, 400)
    before = memory(memrepo)
    for args in (["--dry-run"], ["--dry-run", "--json"], ["--json"], []):
        result = cli(["import", "gemini", *args], cwd=memrepo.path)
        assert result.code == 1, (args, result.err)
        assert memory(memrepo) == before, args
        if "--json" in args:
            shown = json.loads(result.out)
            (refused,) = shown["refused"]
            assert (refused["path"], refused["code"]) == ("DECISIONS.md", "GM954") and "written" not in shown
            assert len(shown["proposals"]) == 400, "what would land is still shown"
        else:
            assert re.search(r"^DECISIONS\.md:\d+: GM954 this import's decision \(400 facts\) would make Pending "
                             r"\d+ characters; the limit is \d+, 15% of the context's hard limit", result.err,
                             re.M), result.err
            assert "the whole batch is refused" in result.err
    many_facts(home, 20)
    assert cli(["import", "gemini"], cwd=memrepo.path).code == 0, "a batch that fits lands"


def test_a_batch_that_would_be_one_pending_decision_too_many_is_refused(memrepo: GitRepo, cli: Cli,
                                                                        home: Path) -> None:
    config = memrepo.path / "gitmem.yaml"
    config.write_text(config.read_text().replace("limits:\n", "limits:\n  pending_max: 1\n", 1))
    assert "pending_max: 1" in config.read_text()
    put(home / ".gemini", {"GEMINI.md": "## Gemini Added Memories\n- Prefers Python.\n"})
    assert cli(["import", "gemini"], cwd=memrepo.path).code == 0
    commit_all(memrepo)
    put(home / ".gemini", {"GEMINI.md": "## Gemini Added Memories\n- Prefers Python.\n- Uses pnpm.\n"})
    before = memory(memrepo)
    result = cli(["import", "gemini", "--dry-run"], cwd=memrepo.path)
    assert result.code == 1
    assert re.search(r"DECISIONS\.md:\d+: GM954 this import's decision would be Pending decision 2; the limit is 1 "
                     r"\(limits\.pending_max\)", result.err), result.err
    assert memory(memrepo) == before


def test_a_hunk_cut_short_is_not_a_patch_even_with_a_last_line_end() -> None:
    """Found by review: the empty string after the text's last line end counted as a context line, so a hunk
    whose header promises two lines each side, with one after it, was taken for a patch."""
    from gitmem.interop.gemini_inbox import NotAPatch, parse_patch

    with pytest.raises(NotAPatch, match="ends inside a hunk"):
        parse_patch("--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-a\n+b\n")
    assert parse_patch("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n")[1][0].added == ["b"]


def test_the_global_memorys_imports_are_read_inside_its_own_folder_only(memrepo: GitRepo, cli: Cli,
                                                                        home: Path) -> None:
    """Gemini CLI loads what ~/.gemini/GEMINI.md imports as it loads the project's files, bounded to the folder
    `processImports` finds for it (its own, with no `.git` above): those files' memories are read, five hops deep;
    an import at home, outside the folder or shown in code is not, and the first two are said under `not_read`;
    `@~/notes.md` is none at all, as Gemini CLI takes a path only when it starts with `.`, `/` or a letter."""
    put(home, {"notes.md": "- A private note beside the folder.\n", ".gemini/secret.md": "- In the vault.\n"})
    put(home / ".gemini", {
        "GEMINI.md": "## Gemini Added Memories\n- Prefers Python.\n\nMy team's habits live in @team.md for now.\n"
                     f"@../notes.md\n@{home / 'notes.md'} @~/notes.md\n\n```\n@secret.md\n```\n",
        "team.md": "- Reviews happen on Tuesdays.\n\n@sub/more.md\n",
        "sub/more.md": "- Releases go out on Fridays.\n"})
    data = json.loads(cli(["import", "gemini", "--dry-run", "--json"], cwd=memrepo.path).out)
    assert sorted((item["file"], item["line"], item["text"]) for item in data["proposals"]) == [
        ("~/.gemini/GEMINI.md", 2, "Prefers Python."),
        ("~/.gemini/GEMINI.md", 4, "My team's habits live in @team.md for now."),
        ("~/.gemini/sub/more.md", 1, "Releases go out on Fridays."),
        ("~/.gemini/team.md", 1, "Reviews happen on Tuesdays.")]
    not_read = {(item["file"], item["line"], item["target"]): item["reason"] for item in data["not_read"]}
    assert sorted(not_read) == [("~/.gemini/GEMINI.md", 5, "../notes.md"),
                                ("~/.gemini/GEMINI.md", 6, str(home / "notes.md"))], "`@~/` is no import to Gemini CLI"
    assert all(reason.startswith("outside Gemini CLI's own folder") for reason in not_read.values())
