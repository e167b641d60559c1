"""`gitmem fleet`: many agents, one human. The agents of fleet.yaml read side by side, each with the bounded reads
of `gitmem status` and `gitmem pending`, into one inbox, one health table and one page.

  fleetfile  fleet.yaml, validated like gitmem.yaml
  schedule   how often an agent should run, from its workflow's cron lines
  read       one agent: its repository (in place, or a read-only copy in the cache) into rows and decisions
  parallel   every agent in parallel worker processes, each under a timeout
  page       the fleet's HTML page
"""
