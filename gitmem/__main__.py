from __future__ import annotations

from gitmem.cli import main

raise SystemExit(main())
