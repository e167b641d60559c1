"""`python -m gitmem` and the `gitmem` console script: the CLI, its imports made without the cyclic garbage
collector (`gitmem.cli.SHORT_LIVED` says why; `gitmem.cli.main` decides once a command is chosen)."""
from __future__ import annotations

import gc


def start() -> int:
    """`gitmem.cli.main`, imported with the collector off: importing click and the CLI makes no garbage, and the
    collector's passes over what they build would be a `gitmem check`'s (a library import of `gitmem.cli`
    leaves the collector alone)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        from gitmem.cli import main
    finally:
        if collecting:
            # What the imports built lives as long as the process: frozen, no pass walks it again, and the count
            # of new objects starts from zero instead of starting a pass as soon as the collector is back on.
            gc.freeze()
            gc.enable()
    return main(ends_process=True)


if __name__ == "__main__":
    raise SystemExit(start())
