"""``python -m evaljig_fixtures``: the ``evaljig-fixtures`` command (``python -m evaljig_fixtures regen --check``)."""

from evaljig_fixtures._cli import main

raise SystemExit(main())
