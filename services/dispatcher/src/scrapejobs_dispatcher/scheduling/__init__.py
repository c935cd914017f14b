"""Cloud Scheduler: the recurring jobs registered with it, and its triggers."""
