"""Files opened without following links inside the work tree: the bottom of every read and write gitmem trusts.

  files  the one open of a trusted file (memory, ROADMAP, `cycle.always_load`, gitmem.yaml): a regular file
         inside the tree, reached component by component with O_NOFOLLOW, or refused with `FileRefused`
  walk   `walk_tree` and `remove_tree`: `os.walk` and `shutil.rmtree` without recursion, for trees an agent
         may nest past Python's limit

It sits below the git layer and the config, which both read through it, and knows nothing of either.
"""
