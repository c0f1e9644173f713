"""``python -m evaljig`` is the ``evaljig`` command."""

from evaljig._cli import main

raise SystemExit(main())
