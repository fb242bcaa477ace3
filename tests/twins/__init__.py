"""In-memory twins of the storage ports, for fast unit tests."""
