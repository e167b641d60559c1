"""`gitmem init`: create whatever memory scaffolding is missing; never overwrite; merge pre-commit hooks."""
from __future__ import annotations

import io
import shutil
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

PRECOMMIT = ".pre-commit-config.yaml"
# The template's own README explains the template; `init` into an existing repo leaves its README alone.
NOT_COPIED = {"README.md"}
HOOK_IDS = ("gitmem-check", "gitmem-verify")


@dataclass
class InitReport:
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    left_alone: list[str] = field(default_factory=list)
    initialised_git: bool = False


def template_dir() -> Path:
    """The template shipped in the wheel, or `template-repo/` beside the package in a source checkout."""
    shipped = resources.files("gitmem") / "_template"
    if shipped.is_dir():
        return Path(str(shipped))
    source = Path(__file__).resolve().parent.parent / "template-repo"
    if source.is_dir():
        return source
    raise FileNotFoundError("the gitmem template is missing from this installation; reinstall gitmem-agent")


def template_files() -> list[str]:
    base = template_dir()
    return sorted(str(p.relative_to(base).as_posix()) for p in base.rglob("*")
                  if p.is_file() and "__pycache__" not in p.parts)


def init(target: Path) -> InitReport:
    from gitmem import repo as git

    report = InitReport()
    target.mkdir(parents=True, exist_ok=True)
    try:
        git.open_repo(target)
    except git.RepoError:
        import pygit2

        pygit2.init_repository(str(target), initial_head="main")
        report.initialised_git = True
    base = template_dir()
    for rel in template_files():
        if rel in NOT_COPIED:
            continue
        destination = target / rel
        if not destination.exists():
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(base / rel, destination)
            report.created.append(rel)
        elif rel == PRECOMMIT:
            if merge_precommit(destination, base / rel):
                report.updated.append(rel)
            else:
                report.left_alone.append(rel)
        else:
            report.left_alone.append(rel)
    return report


def merge_precommit(existing: Path, template: Path) -> bool:
    """Add the gitmem hook repo to an existing config with a round-trip that keeps comments and order.

    Returns False when the hooks are already there (idempotent).
    """
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.indent(mapping=2, sequence=4, offset=2)
    data = yaml.load(existing.read_text(encoding="utf-8")) or {}
    repos = data.setdefault("repos", [])
    present = {hook.get("id") for repo in repos for hook in (repo.get("hooks") or [])}
    if all(hook_id in present for hook_id in HOOK_IDS):
        return False
    ours = yaml.load(template.read_text(encoding="utf-8"))["repos"][0]
    ours["hooks"] = [hook for hook in ours["hooks"] if hook["id"] not in present]
    repos.append(ours)
    buffer = io.StringIO()
    yaml.dump(data, buffer)
    existing.write_text(buffer.getvalue(), encoding="utf-8")
    return True
