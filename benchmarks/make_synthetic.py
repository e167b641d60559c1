"""Build a synthetic gitmem memory repository: `python benchmarks/make_synthetic.py --scale 10 DIR`.

Scale 1 is a real agent's size (13,265 LOG lines, 480 cycles, 1,000 commits). Prints what was built,
including the planted facts that the recall benchmark queries.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directory", help="where to create the repository (must be empty or absent)")
    parser.add_argument("--scale", type=float, default=1.0, help="history size relative to the original agent")
    parser.add_argument("--seed", type=int, default=0, help="random seed; the same seed builds the same repo")
    parser.add_argument("--facts", action="store_true", help="also list the planted facts")
    args = parser.parse_args(argv)

    from tests.support.synth import build_synthetic_repo

    try:
        info = build_synthetic_repo(args.directory, scale=args.scale, seed=args.seed)
    except (FileExistsError, ValueError) as err:
        print(f"make_synthetic: {err}", file=sys.stderr)
        return 2
    print(f"{info.path}: scale {info.scale:g}, seed {info.seed}: {info.commits} commits, {info.cycles} cycles, "
          f"{info.log_lines} LOG lines, decisions {info.decisions_pending} pending / {info.decisions_resolved} "
          f"resolved, {info.lessons} lessons, rules {info.proven_rules} proven / {info.retired_rules} retired, "
          f"{len(info.facts)} planted facts, built in {info.seconds:.1f} s")
    if args.facts:
        for fact in info.facts:
            print(f"  {fact.query!r} -> {fact.kind} {fact.ref} ({fact.path}:{fact.line})")
        for pair in info.superseded:
            print(f"  {pair.query!r} -> log {pair.new.ref}, superseding log {pair.old.ref}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
