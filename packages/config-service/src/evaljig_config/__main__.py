"""``python -m evaljig_config``: the ``evaljig-config`` command."""

from evaljig_config._cli import entry

raise SystemExit(entry())
