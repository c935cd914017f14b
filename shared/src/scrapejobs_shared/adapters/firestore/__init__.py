"""Firestore adapters: the job store, its counters and codec, and the host gate."""
