"""Agent CLIs installed the ways users install node programs run in the box on the same node, with their own
modules, as outside it: a package in an npm-global prefix reached through its `bin/` link, node from an
install of its own (nvm's layout), found directly on PATH, through a link in another PATH directory, or named
by an absolute `#!` line; and the Action's chain of links (venv `bin/claude` -> `node_modules/.bin` -> the
package). A link that was bound instead of made again put a copy of the script at the link's path, where
`require('./helper.js')` failed; a PATH directory left out let `#!/usr/bin/env node` run the system's node."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from gitmem.agents.sandbox import choose
from gitmem.config import parse_config
from tests.support.helpers import GitRepo
from tests.support.nobody import bwrap_works

NODE = shutil.which("node")
pytestmark = [pytest.mark.skipif(not bwrap_works([]), reason="bwrap is not installed or cannot create namespaces "
                                                             "here (.ci/run installs bubblewrap)"),
              pytest.mark.skipif(NODE is None, reason="no node on PATH")]
SCRIPT = "require('./helper.js'); console.log(process.execPath)\n"


def _node_install(place: Path) -> Path:
    """node in an install of its own, `place/node-v20/bin/node` (hard-linked: nothing to copy)."""
    assert NODE is not None
    node = place / "node-v20" / "bin" / "node"
    node.parent.mkdir(parents=True)
    try:
        os.link(os.path.realpath(NODE), node)
    except OSError:
        shutil.copy2(os.path.realpath(NODE), node)
    return node


def _package(folder: Path, shebang: str) -> Path:
    """An npm package's entry script, with a module of its own beside it."""
    folder.mkdir(parents=True)
    (folder / "helper.js").write_text("module.exports = 1\n", encoding="utf-8")
    script = folder / "cli.js"
    script.write_text(f"{shebang}\n{SCRIPT}", encoding="utf-8")
    script.chmod(0o755)
    return script


def _link(link: Path, target: str) -> None:
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target)


def _npm_global_with_env_node(place: Path, node: Path) -> list[str]:
    _package(place / "npm-global" / "lib" / "node_modules" / "agent", "#!/usr/bin/env node")
    _link(place / "npm-global" / "bin" / "agent", "../lib/node_modules/agent/cli.js")
    return [str(place / "npm-global" / "bin"), str(node.parent)]


def _node_linked_into_another_path_dir(place: Path, node: Path) -> list[str]:
    _package(place / "npm-global" / "lib" / "node_modules" / "agent", "#!/usr/bin/env node")
    _link(place / "npm-global" / "bin" / "agent", "../lib/node_modules/agent/cli.js")
    _link(place / "home" / ".local" / "bin" / "node", str(node))
    return [str(place / "npm-global" / "bin"), str(place / "home" / ".local" / "bin")]


def _absolute_shebang_through_a_linked_node(place: Path, node: Path) -> list[str]:
    _link(place / "opt" / "bin" / "node", str(node))          # `#!/opt/bin/node`, itself a link
    _package(place / "npm-global" / "lib" / "node_modules" / "agent", f"#!{place / 'opt' / 'bin' / 'node'}")
    _link(place / "npm-global" / "bin" / "agent", "../lib/node_modules/agent/cli.js")
    return [str(place / "npm-global" / "bin")]


def _the_actions_chain_of_links(place: Path, node: Path) -> list[str]:
    modules = place / "agent-cli" / "node_modules"
    _package(modules / "agent", "#!/usr/bin/env node")
    _link(modules / ".bin" / "agent", "../agent/cli.js")
    _link(place / "venv" / "bin" / "agent", str(modules / ".bin" / "agent"))
    return [str(place / "venv" / "bin"), str(node.parent)]


@pytest.mark.parametrize("install", [_npm_global_with_env_node, _node_linked_into_another_path_dir,
                                     _absolute_shebang_through_a_linked_node, _the_actions_chain_of_links])
def test_a_node_cli_runs_on_the_same_node_with_its_own_modules_inside(install, tmp_path: Path,
                                                                     memrepo: GitRepo) -> None:
    place = tmp_path / "installs"
    node = _node_install(place)
    path = os.pathsep.join([*install(place, node), "/usr/bin", "/bin"])   # a system node later on PATH too
    outside = subprocess.run(["agent"], env={"PATH": path}, capture_output=True, text=True, timeout=60)
    assert outside.returncode == 0 and outside.stdout.strip() == str(node), outside.stderr
    box = choose(parse_config(b"agent:\n  sandbox: bubblewrap\n"))
    argv, env = box.wrap(["agent"], {"PATH": path}, workspace=memrepo.ws())
    inside = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    assert (inside.returncode, inside.stdout.strip()) == (0, str(node)), inside.stderr
