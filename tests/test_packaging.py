"""The installed command, the wheel's contents, and a lean hook path (no anthropic, no mistune, no numpy)."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pygit2
import pytest

import gitmem
import gitmem.scaffold.init as gitmem_init

PROJECT_ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
HEAVY = ("anthropic", "mistune", "httpx", "httpx2", "numpy", "tokenizers", "wordllama")


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") and k != "PYTHONPATH"}
    return {**env, **extra}


@pytest.mark.parametrize("argv", [[str(BIN / "gitmem"), "--version"], [sys.executable, "-m", "gitmem", "--version"]],
                         ids=["console-script", "python-m"])
def test_version(argv: list[str], tmp_path: Path) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, cwd=tmp_path, env=clean_env(), check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"gitmem, version {gitmem.__version__}\n"


def test_template_pins_this_release() -> None:
    """The template's hook and action pins must name the version being shipped, or new agents run old code."""
    base = gitmem_init.template_dir()
    pins = [(rel, pin) for rel in gitmem_init.template_files() if rel.endswith((".yaml", ".yml"))
            for pin in re.findall(r"(?:rev: |gitmem-agent/gitmem@)(v[\w.]+)", (base / rel).read_text("utf-8"))]
    assert (".pre-commit-config.yaml", f"v{gitmem.__version__}") in pins
    assert {pin for _, pin in pins} == {f"v{gitmem.__version__}"}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), "."],
                   cwd=PROJECT_ROOT, check=True, capture_output=True, env=clean_env())
    (built,) = out.glob("gitmem_agent-*.whl")
    return built


@pytest.mark.slow
def test_wheel_ships_the_whole_template(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    shipped = sorted(name.removeprefix("gitmem/_template/") for name in names
                     if name.startswith("gitmem/_template/"))
    assert shipped == gitmem_init.template_files()
    for must in (".pre-commit-config.yaml", "prompts/cycle.md", "prompts/close.md", "gitmem.yaml", "NOW.md"):
        assert must in shipped
    assert "gitmem/cli/__init__.py" in names and "gitmem/__main__.py" in names
    assert not [name for name in names if "__pycache__" in name or name.endswith(".pyc")]
    with zipfile.ZipFile(wheel) as archive:
        entry_points = archive.read(f"gitmem_agent-{gitmem.__version__}.dist-info/entry_points.txt").decode()
    assert "gitmem = gitmem.cli:main" in entry_points


@pytest.mark.slow
def test_init_from_the_unpacked_wheel_finds_the_shipped_template(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    # PYTHONPATH puts the unpacked wheel ahead of the editable install; cwd keeps the checkout off sys.path.
    env = clean_env(PYTHONPATH=str(site))
    probe = ("import gitmem.scaffold.init as i; print(i.__file__); print(i.template_dir()); "
             "print('\\n'.join(i.template_files()))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path, env=env,
                          check=True)
    module, template, *files = done.stdout.splitlines()
    assert Path(module) == site / "gitmem" / "scaffold" / "init.py"
    assert Path(template) == site / "gitmem" / "_template"
    assert files == gitmem_init.template_files()
    done = subprocess.run([sys.executable, "-m", "gitmem", "init", "agent"], capture_output=True, text=True,
                          cwd=tmp_path, env=env, check=False)
    assert done.returncode == 0, done.stderr
    for rel in files:
        if rel not in gitmem_init.NOT_COPIED:
            assert (tmp_path / "agent" / rel).read_bytes() == (site / "gitmem" / "_template" / rel).read_bytes()


def _imported_modules(importtime_stderr: str) -> set[str]:
    # Lines look like "import time:       123 |        456 |   package.module".
    return {line.rsplit("|", 1)[1].strip() for line in importtime_stderr.splitlines()
            if line.startswith("import time:") and line.count("|") == 2}


@pytest.mark.parametrize("argv", [["check"], ["check", "--worktree"], ["verify", "--range", "HEAD..HEAD"]],
                         ids=["check", "check-worktree", "verify"])
def test_the_hook_path_never_imports_heavy_modules(argv: list[str], tmp_path: Path) -> None:
    gitmem_init.init(tmp_path)
    repo = pygit2.Repository(str(tmp_path))
    repo.index.add_all()
    repo.index.write()
    signature = pygit2.Signature("Ada Human", "ada@example.org")
    repo.create_commit("HEAD", signature, signature, "start", repo.index.write_tree(), [])
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "gitmem", *argv], capture_output=True,
                          text=True, cwd=tmp_path, env=clean_env(), check=False)
    assert done.returncode == 0, done.stderr
    imported = _imported_modules(done.stderr)
    assert "gitmem.checks.targets" in imported and "pygit2" in imported  # the probe sees the real work
    assert not {name for name in imported if name.split(".")[0] in HEAVY}


def test_importing_the_cli_is_lean(tmp_path: Path) -> None:
    probe = ("import sys, gitmem.cli; "
             "print(sorted(m for m in sys.modules if m.split('.')[0] in %r))" % (HEAVY,))
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path,
                          env=clean_env(), check=True)
    assert done.stdout == "[]\n"
