"""Adapters: the ports implemented on Firestore, Pub/Sub, and in memory (for unit tests)."""
