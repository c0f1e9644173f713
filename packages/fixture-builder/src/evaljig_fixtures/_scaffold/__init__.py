"""``evaljig init``'s pieces: where the scaffold goes (``layout``), how options become code (``render``), and
writing every file or none (``transaction``). The command itself is ``evaljig_fixtures._init``."""
