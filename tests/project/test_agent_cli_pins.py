"""One source for each agent CLI pin: the committed npm locks under agent-cli/ (what the Action and the tests
install with `npm ci`). The install hints `gitmem init --agent` prints, the Action's description and the pin
notes all name the release the locks pin and the Node.js its `engines` asks for."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from gitmem.scaffold.agent_clis import CLIS, PINNED

ROOT = Path(__file__).resolve().parents[2]


def _locked(folder: str) -> tuple[str, str, str]:
    """(package, version, the major Node.js release its engines need, "" when they name none: a native binary npm
    only installs, or GitHub Copilot CLI's native binary behind a small loader, whose need, import.meta.resolve,
    its PinnedCli says) from agent-cli/<folder>'s lock."""
    lock = json.loads((ROOT / "agent-cli" / folder / "package-lock.json").read_text(encoding="utf-8"))
    (package,) = lock["packages"][""]["dependencies"]
    entry = lock["packages"][f"node_modules/{package}"]
    if "node" not in entry.get("engines", {}):
        return package, entry["version"], ""
    found = re.fullmatch(r">=\s*(\d+)(?:\.0\.0)?", entry["engines"]["node"])
    assert found, entry["engines"]
    return package, entry["version"], found.group(1)


@pytest.mark.parametrize("agent", sorted(PINNED))
def test_every_pin_is_the_release_the_lock_installs_and_names_its_node(agent: str) -> None:
    pin = PINNED[agent]
    package, version, node = _locked(pin.folder)
    assert (pin.package, pin.version, pin.node) == (package, version, node or pin.node)
    hint = CLIS[agent][1]
    assert f"{pin.package}@{pin.version}" in hint
    assert (f"Node.js {pin.node} or newer" in hint) if pin.node else ("Node.js" not in hint), hint


def test_the_action_names_the_pinned_releases_and_their_node() -> None:
    action = YAML(typ="safe").load((ROOT / "action.yml").read_text(encoding="utf-8"))
    described = action["inputs"]["agent-cli"]["description"]
    for agent in ("claude", "codex"):
        pin = PINNED[agent]
        assert f"{pin.version} needs Node.js {pin.node}" in described, (agent, described)


def test_the_pin_notes_agree_with_the_locks() -> None:
    for agent, pin in PINNED.items():
        note = json.loads((ROOT / "agent-cli" / pin.folder / "package.json").read_text(encoding="utf-8"))
        assert note["dependencies"] == {pin.package: pin.version}, agent
        for said in re.findall(r"Node(?:\.js)? (\d+) or newer", note["description"]):
            assert said == pin.node, (agent, note["description"])


def test_the_readme_command_table_names_every_agent_init_wires() -> None:
    from gitmem.scaffold.agent_clis import AGENTS

    row = next(line for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
               if line.startswith("| `gitmem init [DIR]"))
    assert "\\|".join(AGENTS) in row, row


def test_docs_codex_shows_the_config_init_writes(tmp_path: Path, git_env: None) -> None:
    import subprocess
    import sys

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    done = subprocess.run([str(Path(sys.executable).parent / "gitmem"), "init", str(tmp_path), "--agent", "codex"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    written = (tmp_path / ".codex" / "config.toml").read_text(encoding="utf-8")
    docs = (ROOT / "docs" / "codex.md").read_text(encoding="utf-8")
    shown = docs[docs.index("```toml\n", docs.index("`.codex/config.toml` gets the following")) + 8:]
    assert shown[:shown.index("```")] == written


@pytest.mark.parametrize("agent", sorted(PINNED))
def test_every_lock_holds_every_platform_package_its_packages_may_install(agent: str) -> None:
    """`npm ci` refuses a lock that lacks an optional dependency of a locked package, for any platform, though it
    installs only its own ("Missing: opencode-darwin-arm64@ from lock file"); agent-cli/lock_platforms.py adds
    those a registry carrying one platform's packages left out."""
    lock = json.loads((ROOT / "agent-cli" / PINNED[agent].folder / "package-lock.json").read_text(encoding="utf-8"))
    packages = lock["packages"]
    missing = [f"{name}@{version}" for entry in packages.values()
               for name, version in (entry.get("optionalDependencies") or {}).items()
               if f"node_modules/{name}" not in packages]
    assert missing == []
