"""In-memory twins of the adapters, for unit tests; they pass the same contract tests."""
