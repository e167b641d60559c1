"""GM903 over every changed file that is not a memory file: its text, its name, and a symlink's target.

The template promises that `gitmem check` refuses a commit that holds a key, wherever it is. Every changed
file is read, binary ones too (a NUL byte does not make a key less of a key), and UTF-16 text as the text it is;
submodules are not. Paths in the secrets allowlist (`gitmem.secrets.ALLOWLIST_FILE`, a protected path) are
skipped, for fixtures and docs that hold key-shaped strings on purpose. The memory files are left to
`every_memory_file`, which reads only their changed part. No git here: `check_and_verify` hands over each file's
path, mode and bytes.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from gitmem import codes, secrets
from gitmem.checks.violation import Violation

OVERLAP = 4096           # bytes carried between chunks, so a token cut in two is still seen
MAX_PER_FILE = 20        # findings reported per file; one is enough to refuse the commit


@dataclass(frozen=True)
class FileToScan:
    """One file of a state, for the checks that read every file: its path, and its bytes on demand."""
    path: str
    is_link: bool
    chunks: Callable[[], Iterator[bytes]]     # the file's bytes (a link's target), read only when needed


def scan_files(files: Iterable[FileToScan], allow: secrets.Allowlist, *, committed: bool = False) -> list[Violation]:
    """GM903 for each file; `committed` for the files of a commit `verify` judges (variants of rules 5, so that
    a commit made before them keeps passing)."""
    prefix = "committed_" if committed else ""
    found: list[Violation] = []
    for item in files:
        if allow.allows(item.path):
            continue
        shown = secrets.scrub(item.path)       # a report never repeats a secret, nor a name
        for _, what in secrets.find_secrets(item.path.encode("utf-8", "surrogatepass"))[:1]:
            found.append(Violation.of(codes.SECRET_LIKE_TOKEN, shown, 1, f"{prefix}name", what=what))
        found += _scan_content(item, shown, prefix)
    return found


def _scan_content(item: FileToScan, shown: str, prefix: str) -> list[Violation]:
    variant = prefix + ("link" if item.is_link else "file")
    seen: set[int] = set()
    found: list[Violation] = []
    carried, base, lines = b"", 0, 1     # bytes kept from the last chunk, their offset, the line they start on
    chunks = item.chunks()
    for index, chunk in enumerate(chunks):
        if index == 0 and not item.is_link and secrets.wide_codec(chunk) is not None:
            chunk = secrets.as_utf8(chunk + b"".join(chunks))   # UTF-16 or -32 text: read as the text it is
        data = carried + chunk
        for offset, what in secrets.find_secrets(data):
            where = base + offset
            if where in seen:
                continue
            seen.add(where)
            found.append(Violation.of(codes.SECRET_LIKE_TOKEN, shown, lines + data.count(b"\n", 0, offset),
                                      variant, what=what, allowlist=secrets.ALLOWLIST_FILE))
            if len(found) >= MAX_PER_FILE:
                return found
        keep = max(0, len(data) - OVERLAP)
        lines += data.count(b"\n", 0, keep)
        base += keep
        carried = data[keep:]
    return found
