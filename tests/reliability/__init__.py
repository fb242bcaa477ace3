"""The reliability harness: kills, concurrent load, cross-tenant attacks (docs/reliability.md)."""
