"""FastAPI pieces both services share: JSON error bodies and handlers."""
