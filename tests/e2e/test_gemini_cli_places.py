"""Where the real Gemini CLI (pinned in agent-cli/gemini-cli) keeps a project's private memory, and `gitmem import
gemini` finding it there: one prompt run in the repository makes Gemini CLI register the project (its
`~/.gemini/projects.json` and the `.project_root` mark of its folder under `~/.gemini/tmp/`), and the folder
gitmem.interop.gemini_places names is that folder's `memory`. Skipped, loudly, only where npm cannot install it."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gitmem.interop.gemini_places import project_memory_dir
from tests.e2e.test_codex import GITMEM
from tests.support import gemini_cli as gc
from tests.support.claude_cycle import make_project

pytestmark = pytest.mark.slow
PLAIN = "/usr/local/bin:/usr/bin:/bin"


def test_the_private_memory_folder_is_the_one_the_real_gemini_cli_registers(tmp_path: Path, git_env: None) -> None:
    gemini = gc.gemini_or_skip()
    root, home = make_project(tmp_path, agent="gemini")
    (root / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
    fake = gc.FakeGeminiAPI(lambda body: [{"text": "done"}])
    with fake.serve() as url:
        done = subprocess.run([str(gemini), "-p", "Say done.", "--output-format", "json"], cwd=root,
                              env=gc.gemini_env(gc.gemini_home(home), url, PLAIN), capture_output=True, text=True,
                              timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    marks = [mark.parent for mark in (home / ".gemini" / "tmp").glob("*/.project_root")
             if mark.read_text().strip() == str(root.resolve())]
    assert len(marks) == 1, sorted(p.name for p in (home / ".gemini" / "tmp").iterdir())
    registry = json.loads((home / ".gemini" / "projects.json").read_text())
    assert registry["projects"][str(root.resolve())] == marks[0].name
    where = project_memory_dir(home / ".gemini", root)
    assert where == marks[0] / "memory"
    where.mkdir(exist_ok=True)
    (where / "MEMORY.md").write_text("# Project memory\n- The staging deploy needs the VPN.\n")
    env = {k: v for k, v in os.environ.items() if k not in ("GEMINI_CLI_HOME",)}
    imported = subprocess.run([str(GITMEM), "import", "gemini", "--dry-run", "--json"], cwd=root,
                              env={**env, "HOME": str(home)}, capture_output=True, text=True, timeout=120)
    assert imported.returncode == 0, imported.stderr
    proposals = json.loads(imported.stdout)["proposals"]
    assert [item["text"] for item in proposals] == ["The staging deploy needs the VPN."]
    assert proposals[0]["file"] == f"~/.gemini/tmp/{marks[0].name}/memory/MEMORY.md"
