"""Complete a package-lock.json made with `npm install --package-lock-only` against a registry that carries only
this machine's platform packages: `npm ci` refuses a lock that lacks any optionalDependency of a locked package
("Missing: opencode-darwin-arm64@ from lock file"), though it installs only the ones for its own platform. Each
missing platform package gets an entry with its version and the os, cpu and libc its name says, so `npm ci`
skips it on other platforms and, on its own, resolves it from the registry by version.

Usage: python3 agent-cli/lock_platforms.py agent-cli/opencode/package-lock.json
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

OS = {"darwin": "darwin", "linux": "linux", "linuxmusl": "linux", "win32": "win32", "windows": "win32",
      "freebsd": "freebsd"}
CPU = ("x64", "arm64", "ia32", "arm", "ppc64", "riscv64", "s390x", "wasm32")


def platform_of(name: str) -> dict[str, list[str]] | None:
    words = name.rpartition("/")[2].split("-")
    os_names = [OS[w] for w in words if w in OS]
    cpus = [w for w in words if w in CPU]
    if len(os_names) != 1 or len(cpus) != 1:
        return None
    found = {"cpu": cpus, "os": os_names}
    if "musl" in words or "linuxmusl" in words:
        found["libc"] = ["musl"]
    elif "gnu" in words:
        found["libc"] = ["glibc"]
    return found


def complete(lock: dict) -> list[str]:
    packages = lock["packages"]
    added = []
    for entry in list(packages.values()):
        for name, version in (entry.get("optionalDependencies") or {}).items():
            key = f"node_modules/{name}"
            platform = platform_of(name)
            if key in packages or platform is None or not version[:1].isdigit():
                continue
            packages[key] = {"version": version, **platform, "optional": True}
            added.append(f"{name}@{version}")
    lock["packages"] = {"": packages[""], **{key: packages[key] for key in sorted(packages) if key}}
    return added


if __name__ == "__main__":
    path = Path(sys.argv[1])
    lock = json.loads(path.read_text(encoding="utf-8"))
    for line in complete(lock):
        print(f"added {line}")
    path.write_text(json.dumps(lock, indent=2) + "\n", encoding="utf-8")
