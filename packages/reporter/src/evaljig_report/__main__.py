"""``python -m evaljig_report``: the ``evaljig-report`` command, run by this interpreter."""

from evaljig_report._cli import main

if __name__ == "__main__":
    raise SystemExit(main())
