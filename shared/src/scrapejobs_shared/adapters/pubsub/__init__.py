"""Pub/Sub adapters."""
