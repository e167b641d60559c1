"""`gitmem fleet`: many agents, one human. The agents of fleet.yaml read side by side, each with the bounded reads
of `gitmem status` and `gitmem pending`, into one inbox, one health table and one page.

  fleetfile  fleet.yaml (a file, or `--fleet -`'s standard input), validated like gitmem.yaml
  place      where an entry reads (repository, branch, each workspace's folder), the same however it is spelt
  duplicates each agent once in it: no name twice, no repository and workspace read by two entries
  read       one agent: its repository (in place, or a read-only copy in the cache) into rows and decisions
  parallel   every agent in parallel worker processes, each under a timeout
  page       the fleet's HTML page
  target     where the fleet's pages may be written, judged before the first is
  answers    the commands' answers as data, the objects --json prints
  answer_text the same answers as text: the inbox, the health table, the dispatch lines
  writing    the report's pages on disk: the fleet page, each agent's beside it, stale ones removed
  need       what each agent needs of the human, for the header counts and the order of the rows
  public     what a public page may show of an agent
  spending   what the fleet spent today, against fleet.yaml's caps
  dispatch   the catch-up: a workflow_dispatch for each overdue agent, over GitHub's Actions API

How often an agent should run is read from its workflow's cron lines by gitmem.cycle.schedule, which the cycle
also uses to know that it started late.
"""
