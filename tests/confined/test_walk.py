"""gitmem.confined.walk: os.walk and shutil.rmtree without recursion, for trees an agent nests deep."""
from __future__ import annotations

import os
from pathlib import Path

from gitmem.confined.walk import remove_tree, walk_tree
from tests.support.hostile import nest

DEEP = 1100          # past Python's recursion limit (1000): os.walk and shutil.rmtree end in RecursionError here


def test_walk_goes_as_deep_as_the_tree_and_yields_what_os_walk_does(tmp_path: Path) -> None:
    nest(tmp_path / "deep", DEEP)
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.txt").write_text("x", encoding="utf-8")
    os.symlink(tmp_path / "a", tmp_path / "link")            # a link is a name, never entered
    found = {(Path(folder).relative_to(tmp_path).as_posix(), tuple(sorted(dirs)), tuple(sorted(names)))
             for folder, dirs, names in walk_tree(tmp_path)}
    assert len(found) == DEEP + 3                             # the top, a, deep and its DEEP folders
    assert (".", ("a", "deep"), ("link",)) in found and ("a", (), ("x.txt",)) in found
    assert ("/".join(["deep", *["d"] * DEEP]), (), ("f.txt",)) in found
    remove_tree(tmp_path / "deep")              # pytest's own clean-up of old temp folders recurses


def test_walk_skips_what_the_caller_prunes(tmp_path: Path) -> None:
    nest(tmp_path / "skip", 3)
    nest(tmp_path / "keep", 2)
    seen = []
    for folder, dirs, _ in walk_tree(tmp_path):
        dirs[:] = [d for d in dirs if d != "skip"]
        seen.append(Path(folder).relative_to(tmp_path).as_posix())
    assert seen == [".", "keep", "keep/d", "keep/d/d"]


def test_remove_tree_removes_a_tree_nested_past_the_recursion_limit_and_no_link_target(tmp_path: Path) -> None:
    deepest = nest(tmp_path / "deep", DEEP)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep", encoding="utf-8")
    os.symlink(outside, deepest / "link")
    remove_tree(tmp_path / "deep")
    assert not (tmp_path / "deep").exists() and (outside / "keep.txt").read_text(encoding="utf-8") == "keep"
