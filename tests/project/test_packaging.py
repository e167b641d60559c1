"""The installed command, the wheel's contents, and a lean hook path (no anthropic, no mistune, no numpy)."""
from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pygit2
import pytest

import gitmem
import gitmem.scaffold.init as gitmem_init
from tests.support.untraced import untraced_environ

PROJECT_ROOT = Path(__file__).resolve().parents[2]
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


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    # Untraced by coverage: pip and the build backend run none of gitmem (traced, the build cost 60% more CPU).
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), "."],
                   cwd=PROJECT_ROOT, check=True, capture_output=True, env=untraced_environ(clean_env()))
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
        info = f"gitmem_agent-{gitmem.__version__}.dist-info"
        entry_points = archive.read(f"{info}/entry_points.txt").decode()
        metadata = archive.read(f"{info}/METADATA").decode()
        for hook in ("pre-commit", "pre-push"):
            assert archive.read(f"gitmem/_hooks/{hook}") == (PROJECT_ROOT / "hooks" / hook).read_bytes()
            assert archive.getinfo(f"gitmem/_hooks/{hook}").external_attr >> 16 & 0o111, "hooks ship executable"
        assert f"{info}/licenses/LICENSE" in names
    assert "gitmem = gitmem.__main__:start" in entry_points
    assert "License-Expression: MIT" in metadata
    assert "Project-URL: Source, https://github.com/" in metadata
    requires = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:")]
    assert not [line for line in requires if "anthropic" in line and "extra ==" not in line]
    assert any("anthropic" in line and "extra == 'agent'" in line.replace('"', "'") for line in requires)


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
    assert "gitmem.checks.check_and_verify" in imported and "pygit2" in imported  # the probe sees the real work
    assert not {name for name in imported if name.split(".")[0] in HEAVY}


def test_importing_the_cli_is_lean(tmp_path: Path) -> None:
    probe = ("import sys, gitmem.cli; "
             f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r}))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path,
                          env=clean_env(), check=True)
    assert done.stdout == "[]\n"


@pytest.fixture(scope="module")
def base_install(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel pip-installed without extras into a fresh venv: what the pre-commit hooks get."""
    venv = tmp_path_factory.mktemp("base-venv")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)], check=True,
                   capture_output=True, env=clean_env())
    return venv / "bin"


@pytest.mark.slow
def test_the_base_install_runs_the_quick_start_and_names_the_extra_it_lacks(base_install: Path,
                                                                            tmp_path: Path) -> None:
    env = clean_env(HOME=str(tmp_path), PATH=f"{base_install}{os.pathsep}{os.environ.get('PATH', '')}")
    env.pop("ANTHROPIC_API_KEY", None)
    probe = subprocess.run([str(base_install / "python"), "-c", "import anthropic"], capture_output=True, env=env)
    assert probe.returncode != 0, "the base install must not bring the anthropic SDK"
    demo = subprocess.run([str(base_install / "gitmem"), "demo", "demo1"], cwd=tmp_path, capture_output=True,
                          text=True, env=env)
    assert demo.returncode == 0, demo.stdout + demo.stderr
    assert "Daily close (closed)" in demo.stdout
    agent = tmp_path / "demo1"
    checked = subprocess.run([str(base_install / "gitmem"), "check", "--worktree"], cwd=agent, capture_output=True,
                             text=True, env=env)
    assert checked.returncode == 0, checked.stderr
    cycle = subprocess.run([str(base_install / "gitmem"), "cycle", "--agent", "anthropic"], cwd=agent,
                           capture_output=True, text=True, env={**env, "ANTHROPIC_API_KEY": "sk-ant-not-real"})
    assert cycle.returncode == 2
    assert gitmem.install_command("agent") in cycle.stderr and "Traceback" not in cycle.stderr
    hooks = subprocess.run([str(base_install / "gitmem"), "init", "--plain-hooks", "fresh"], cwd=tmp_path,
                           capture_output=True, text=True, env=env)
    assert hooks.returncode == 0, hooks.stderr
    for hook in ("pre-commit", "pre-push"):
        installed = (tmp_path / "fresh" / ".git" / "hooks" / hook).read_bytes()
        assert installed == (PROJECT_ROOT / "hooks" / hook).read_bytes()
