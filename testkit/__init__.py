"""Repository-level test support shared by every package's tests (not shipped in any wheel)."""
