"""Hostile input, class 4: secrets. Current key formats of the major providers are found (one module), in every
staged text file, its name and a symlink's target; the runner scrubs files of any size, names and link targets
before anything is committed; an allowlist (a protected path) lets fixtures through; old bytes are not judged."""
from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from gitmem import secrets
from gitmem.errors import ExitCode
from tests.support.cycle_support import file_at, is_clean
from tests.support.gitcli import git
from tests.support.helpers import GitRepo
from tests.support.hostile import cycle, evidence, no_traceback

# One current example per provider format; none is a real key.
KEYS = {
    "openai-project": "sk-proj-" + "Ab3_dE-f9" * 18,
    "openai-project-underscore": "sk-proj-Ab3_" + "x" * 60,
    "openai-service-account": "sk-svcacct-" + "Zz_9-y" * 12,
    "openai-admin": "sk-admin-" + "Q1w2_E3r4-" * 6,
    "openai-legacy": "sk-" + "a1B2c3D4" * 6,
    "anthropic": "sk-ant-api03-" + "Ab-cD_ef" * 10,
    "anthropic-admin": "sk-ant-admin01-" + "Zy-xW_vu" * 10,
    "github-classic": "ghp_" + "a1B2c3D4e5F6" * 3,
    "github-app": "ghs_" + "Z9y8X7w6V5u4" * 3,
    "github-fine-grained": "github_pat_11ABCDEFG0" + "aB3_cD4" * 12,
    "gitlab": "glpat-" + "xY1z_2-aB3cD4eF5gH6i",
    "gitlab-deploy": "gldt-" + "Qw3rTy_uI0p-AsDf9GhJ",
    "aws-access-key": "AKIA" + "QWERTYUIOPASDFGH",
    "aws-secret": "aws_secret_access_key = " + "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "google-api": "AIza" + "SyD-4bC1d2E3f4G5h6I7j8K9l0M1n2O3p4q",
    "google-oauth-secret": "GOCSPX-" + "aB3cD4eF5gH6iJ7kL8mN9oP0qR1s",
    "slack-bot": "xoxb-" + "1234567890-0987654321-aBcDeFgHiJkLmNoP",
    "slack-webhook": "https://hooks.slack.com/services/T0000AAAA/B0000BBBB/" + "a1b2c3d4e5f6g7h8i9j0",
    "stripe-live": "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
    "stripe-restricted": "rk_live_" + "51H9xYz" * 4,
    "huggingface": "hf_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ012345",
    "npm": "npm_" + "aB3cD4eF5gH6iJ7kL8mN9oP0qR1sT2uV3wX4",
    "pypi": "pypi-AgEIcHlwaS5vcmc" + "CJDU3ZTQ1NjYtZWQ4Ni00YjZlLWI1NDktNzE5ZmE3MmY1NGI0AAI",
    "private-key": "-----BEGIN OPENSSH PRIVATE KEY-----",
    "private-key-ec": "-----BEGIN EC PRIVATE KEY-----",
}


@pytest.mark.parametrize("kind", sorted(KEYS))
def test_every_current_format_is_found_in_any_staged_file(memrepo: GitRepo, cli, kind: str) -> None:
    key = KEYS[kind]
    memrepo.stage_files({"config.env": f"# settings\nVALUE={key}\n"})
    result = cli(["check"], cwd=memrepo.path)
    assert result.code == ExitCode.VIOLATIONS, result.out
    assert result.lines[0].startswith("config.env:2: GM903 ")
    assert key not in result.out + result.err and key[12:30] not in result.out + result.err
    assert no_traceback(result.err)


def test_the_pattern_list_lives_in_one_module_and_covers_the_providers() -> None:
    whats = " ".join(p.what for p in secrets.PATTERNS)
    for provider in ("OpenAI", "Anthropic", "GitHub", "GitLab", "AWS", "Google", "Slack", "Stripe",
                     "Hugging Face", "npm", "PyPI", "private key"):
        assert provider in whats
    for key in KEYS.values():
        assert secrets.redact(f"x {key} y") != f"x {key} y"


@pytest.mark.parametrize("files,where", [
    ({"notes/ghp_" + "a1B2c3D4e5F6" * 3 + ".txt": "harmless\n"}, "name"),
    ({"link": None}, "link"),
    ({"docs/guide.md": "intro\n" * 1000 + KEYS["openai-project"] + "\n"}, "file"),
    ({"Makefile": "deploy:\n\tcurl -H 'Authorization: Bearer " + KEYS["github-app"] + "'\n"}, "file"),
])
def test_names_link_targets_and_deep_lines_are_checked(memrepo: GitRepo, cli, files: dict, where: str) -> None:
    if "link" in files:
        os.symlink(KEYS["github-classic"], memrepo.path / "link")
        git(memrepo.path, "add", "link")
    else:
        memrepo.stage_files(files)
    result = cli(["check"], cwd=memrepo.path)
    assert result.code == ExitCode.VIOLATIONS
    assert "GM903" in result.out
    wanted = {"name": "the file name looks like", "link": "the symlink's target looks like",
              "file": "this looks like"}[where]
    assert wanted in result.out
    assert KEYS["github-classic"] not in result.out


@pytest.mark.parametrize("data", [
    b"\x89PNG\0\0" + KEYS["github-classic"].encode(),                          # a NUL does not hide a key
    ("token = " + KEYS["openai-project"] + "\n").encode("utf-16"),              # UTF-16 with a byte order mark
    ("token = " + KEYS["stripe-live"] + "\n").encode("utf-16-le"),              # and without one
    b"\0" * 9000 + KEYS["aws-access-key"].encode(),
    ("token = " + KEYS["github-classic"] + "\n").encode("utf-32"),              # UTF-32 with a byte order mark
    ("token = " + KEYS["huggingface"] + "\n").encode("utf-32-le"),              # and without one, either order
    ("token = " + KEYS["npm"] + "\n").encode("utf-32-be"),
], ids=["binary", "utf-16-bom", "utf-16-le", "nul-prefix", "utf-32-bom", "utf-32-le", "utf-32-be"])
def test_binary_and_utf16_files_are_read_too(memrepo: GitRepo, cli, data: bytes) -> None:
    memrepo.stage_files({"blob.dat": data})
    result = cli(["check"], cwd=memrepo.path)
    assert result.code == ExitCode.VIOLATIONS and "blob.dat:1: GM903" in result.out


def test_the_runner_masks_a_key_in_a_utf16_file_in_its_own_encoding(memrepo: GitRepo) -> None:
    text = "token = " + KEYS["openai-project"] + "\nmore\n"
    cycle(memrepo, lambda root, memory, request: (root / "notes.txt").write_bytes(text.encode("utf-16")))
    committed = memrepo.repo.revparse_single("HEAD:notes.txt").data
    assert committed.decode("utf-16") == "token = ***\nmore\n"


@pytest.mark.parametrize("codec", ["utf-32", "utf-32-be"])
def test_the_runner_masks_a_key_in_a_utf32_file_in_its_own_encoding(memrepo: GitRepo, codec: str) -> None:
    text = "token = " + KEYS["openai-project"] + "\nmore\n"
    cycle(memrepo, lambda root, memory, request: (root / "notes.txt").write_bytes(text.encode(codec)))
    committed = memrepo.repo.revparse_single("HEAD:notes.txt").data
    assert committed == "token = ***\nmore\n".encode(codec)


def test_the_allowlist_lets_fixtures_through_and_nothing_else(memrepo: GitRepo, cli) -> None:
    memrepo.stage_files({secrets.ALLOWLIST_FILE: "# fake keys for tests\ntests/fixtures/\ndocs/*.md\n",
                         "tests/fixtures/keys.txt": KEYS["stripe-live"] + "\n",
                         "docs/secrets.md": "example: " + KEYS["openai-project"] + "\n"})
    assert cli(["check"], cwd=memrepo.path).code == ExitCode.OK
    memrepo.stage_files({"src/settings.py": f"KEY = '{KEYS['stripe-live']}'\n"})
    result = cli(["check"], cwd=memrepo.path)
    assert result.code == ExitCode.VIOLATIONS and result.lines[0].startswith("src/settings.py:1: GM903")


def test_the_allowlist_cannot_be_widened_by_the_agent(memrepo: GitRepo) -> None:
    def act(root: Path, memory, request) -> None:
        (root / secrets.ALLOWLIST_FILE).write_text("*\n")
        (root / "leak.txt").write_text("key " + KEYS["anthropic"] + "\n")

    report = cycle(memrepo, act)
    assert file_at(memrepo.repo, "HEAD", "leak.txt") == "key ***\n"
    assert file_at(memrepo.repo, "HEAD", secrets.ALLOWLIST_FILE) is None
    assert report.proposal_branch is not None


def test_an_unchanged_old_file_is_not_judged_again(memrepo: GitRepo, cli) -> None:
    """New rules judge new bytes: a key-shaped fixture committed before the upgrade does not block commits."""
    memrepo.commit_files({"old/fixture.txt": KEYS["aws-access-key"] + "\n"}, "an old fixture")
    memrepo.stage_files({"README.md": "more docs\n"})
    assert cli(["check"], cwd=memrepo.path).code == ExitCode.OK


# -- the runner's scrub ---------------------------------------------------------------------------------------------

def test_the_runner_scrubs_a_file_of_any_size(memrepo: GitRepo) -> None:
    big = 12 * 1024 * 1024
    key = KEYS["openai-project"]

    def act(root: Path, memory, request) -> None:
        with (root / "dump.log").open("wb") as handle:
            handle.write(b"x" * big + b"\n" + key.encode() + b"\n" + b"y" * 1000 + b"\n")

    report = cycle(memrepo, act)
    assert report.exit_code == ExitCode.OK
    committed = memrepo.repo.revparse_single("HEAD:dump.log").data
    assert key.encode() not in committed and len(committed) > big
    assert "removed a secret value from dump.log" in evidence(memrepo)


def test_the_runner_masks_names_and_link_targets(memrepo: GitRepo) -> None:
    key = KEYS["huggingface"]

    def act(root: Path, memory, request) -> None:
        (root / f"token-{key}.txt").write_text("notes\n")
        os.symlink(f"/tmp/{key}", root / "pointer")

    report = cycle(memrepo, act)
    assert report.exit_code == ExitCode.OK and is_clean(memrepo)
    names = [entry.name for entry in memrepo.repo.revparse_single("HEAD").peel(__import__("pygit2").Commit).tree]
    assert not any(key in name for name in names) and "token-***.txt" in names
    assert memrepo.repo.revparse_single("HEAD:pointer").data == b"/tmp/***"


def test_salvage_scrubs_too(memrepo: GitRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "plain-token-value-123")

    def act(root: Path, memory, request) -> None:
        (root / "half.txt").write_text("token plain-token-value-123 and " + KEYS["npm"] + "\n")

    report = cycle(memrepo, act, fail="crashed")
    assert report.exit_code == ExitCode.SALVAGED
    saved = file_at(memrepo.repo, report.salvage_branch, "half.txt")
    assert saved == "token *** and ***\n"


@settings(max_examples=60, deadline=None)
# Found by this test after a run of the suite: cut inside `ghp_sk-proj-…` with no line end, the stream masked the
# `sk-proj-` token the whole text does not (it is part of one word there).
@example(["ghp_", "sk-proj-", "a1B2c3D4e5F6" * 3, "text ", "a1B2c3D4e5F6" * 3], 1)
@given(st.lists(st.sampled_from(["text ", "\n", "sk-proj-", "Ab3_dE-f9" * 3, "-----BEGIN RSA PRIVATE KEY-----\n",
                                 "MIIEpAIBAAKCAQEA" * 2 + "\n", "-----END RSA PRIVATE KEY-----\n", "ghp_",
                                 "a1B2c3D4e5F6" * 3, "xyz", " "]), max_size=60),
       st.integers(min_value=1, max_value=64))
def test_streaming_masks_what_the_whole_text_masks(pieces: list[str], chunk: int) -> None:
    data = "".join(pieces).encode()
    whole = secrets.redact_bytes(data)
    original = (secrets.CHUNK, secrets.KEEP)
    try:
        secrets.CHUNK, secrets.KEEP = chunk, 4 * chunk + 80
        sink = io.BytesIO()
        changed = secrets.redact_stream(io.BytesIO(data), sink)
    finally:
        secrets.CHUNK, secrets.KEEP = original
    streamed = sink.getvalue()
    assert changed == (whole != data)
    assert secrets.find_secrets(streamed) == [] or secrets.find_secrets(whole) != []
    assert (streamed == data) == (whole == data)


def test_scrubbing_renames_to_a_free_name_and_keeps_tracked_and_allowed_files(tmp_path: Path) -> None:
    from gitmem.cycle.scrub import scrub_paths

    key = KEYS["npm"]
    (tmp_path / "***.txt").write_text("taken\n")
    (tmp_path / f"{key}.txt").write_text("new\n")
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / f"{key}.md").write_text("tracked\n")
    (tmp_path / "fixtures").mkdir()
    (tmp_path / "fixtures" / "keys.txt").write_text(key + "\n")
    result = scrub_paths(tmp_path, [f"{key}.txt", f"old/{key}.md", "fixtures/keys.txt", "gone.txt"],
                         allow=secrets.Allowlist(("fixtures/",)), tracked=lambda path: path.startswith("old/"))
    assert result.paths == ["***.txt-2", f"old/{key}.md", "fixtures/keys.txt", "gone.txt"]
    assert (tmp_path / "***.txt-2").read_text() == "new\n" and (tmp_path / "***.txt").read_text() == "taken\n"
    assert (tmp_path / "fixtures" / "keys.txt").read_text() == key + "\n"
    assert all(key not in note for note in result.notes)


def test_a_masked_name_never_goes_through_a_planted_link(tmp_path: Path) -> None:
    from gitmem.cycle.scrub import scrub_paths

    key = KEYS["github-classic"]
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "root"
    (root / key).mkdir(parents=True)
    (root / key / "x.txt").write_text("x\n")
    os.symlink(outside, root / "***")            # where the masked folder name would go
    result = scrub_paths(root, [f"{key}/x.txt"])
    assert result.paths == ["***__x.txt"] and (root / "***__x.txt").read_text() == "x\n"
    assert list(outside.iterdir()) == []


def test_masking_a_utf16_file_never_writes_through_a_planted_temp_name(tmp_path: Path) -> None:
    from gitmem.cycle.scrub import scrub_paths

    outside = tmp_path / "outside.txt"
    outside.write_text("the human's file\n")
    root = tmp_path / "root"
    root.mkdir()
    (root / "notes.txt").write_bytes(("token = " + KEYS["openai-project"] + "\n").encode("utf-16"))
    os.symlink(outside, root / ".notes.txt.scrub")       # where the masked copy used to be written
    scrub_paths(root, ["notes.txt"])
    assert outside.read_text() == "the human's file\n"
    assert (root / "notes.txt").read_bytes().decode("utf-16") == "token = ***\n"
    assert os.path.islink(root / ".notes.txt.scrub")     # the agent's link is left as it was, to be committed


@pytest.mark.parametrize("prefix", ["", "a", "ab", "key="])
def test_an_environment_secret_is_masked_base64_or_url_encoded_too(prefix: str) -> None:
    import base64
    from urllib.parse import quote

    value = "plain/secret+value=0123456789abcdef"           # no provider pattern matches it: only the env does
    environ = {"ANTHROPIC_API_KEY": value}
    values = secrets.env_values(environ)
    assert values[0] == value
    for encoded in (base64.b64encode((prefix + value).encode()), base64.urlsafe_b64encode((prefix + value).encode()),
                    (prefix + quote(value, safe="")).encode()):
        masked = secrets.redact_bytes(b"x " + encoded + b" y", values)
        assert secrets.MASK.encode() in masked
        middle = value[3:-3].encode()
        assert not any(base64.b64encode(middle[i:i + 9]) in masked for i in range(3))
        assert quote(value[3:-3], safe="").encode() not in masked
