"""Ports: the protocols service logic depends on (adapters implement them)."""
