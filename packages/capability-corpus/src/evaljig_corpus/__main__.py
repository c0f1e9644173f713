"""``python -m evaljig_corpus``: the ``evaljig-corpus`` command."""

from evaljig_corpus._cli import main

raise SystemExit(main())
