"""What a fetched page (or an uploaded file) becomes: its task outcome, made by extraction and the
job's pipeline."""
