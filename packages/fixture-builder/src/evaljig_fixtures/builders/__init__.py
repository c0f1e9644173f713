"""The regen builders shipped with evaljig-fixtures; ``regen.registry.BUILDERS`` lists them in run order."""
