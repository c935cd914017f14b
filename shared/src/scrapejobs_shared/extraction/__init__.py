"""Parsing and extraction: pure functions over bytes and text (no I/O, no cloud or web names)."""
