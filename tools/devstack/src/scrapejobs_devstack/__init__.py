"""Local stack for development and tests: emulators, Pub/Sub topology, both services."""
