"""``python -m evaljig_gateway``: the ``evaljig-gateway`` command."""

from evaljig_gateway._cli import main

raise SystemExit(main())
