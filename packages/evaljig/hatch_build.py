"""Pin every evaljig package to the meta-package's own version, which comes from the VERSION file.

A metadata hook rather than a list in pyproject.toml: the version then lives in one place. A
wheel built from the sdist takes version and dependencies from its PKG-INFO (hatchling reads
dynamic fields from there), so the sdist builds standalone.
"""

from __future__ import annotations

from typing import Any

from hatchling.metadata.plugin.interface import MetadataHookInterface


class PinnedMembersHook(MetadataHookInterface):
    """``dependencies``: each name of ``members`` (``[tool.hatch.metadata.hooks.custom]``) as ``name==version``."""

    def update(self, metadata: dict[str, Any]) -> None:
        members = self.config.get("members")
        if not isinstance(members, list) or not all(isinstance(m, str) for m in members) or not members:
            raise TypeError("[tool.hatch.metadata.hooks.custom] members must be a non-empty list of names")
        metadata["dependencies"] = [f"{name}=={metadata['version']}" for name in members]
