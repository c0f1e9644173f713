"""evaljig: offline, deterministic contract tests for LightEval + LiteLLM eval pipelines.

The meta-package: installing it installs every evaljig package at one version, and gives the
``evaljig`` command (``init``, ``version``, and each package's command as a subcommand).
``evaljig[lighteval]`` adds the pinned lighteval stack. The code lives in the packages; this
one only knows their names.
"""

from evaljig._cli import LIGHTEVAL_EXTRA, MEMBERS, TOOLS, installed_versions, main

__all__ = ["LIGHTEVAL_EXTRA", "MEMBERS", "TOOLS", "installed_versions", "main"]
