"""Test support: a programmable local HTTP site and stack helpers."""
