"""Bundled demo site for ``make demo``."""
