"""The regen builders shipped with evaljig-fixtures; ``_builders.registry.BUILDERS`` lists them in run order."""
