"""Cloud Storage adapters."""
