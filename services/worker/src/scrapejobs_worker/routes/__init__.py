"""HTTP routes of the worker."""
