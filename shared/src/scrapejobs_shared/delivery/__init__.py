"""Task delivery logic both services share: planning batches, the one enqueue path, and the
job completion check (pure orchestration over the ports)."""
