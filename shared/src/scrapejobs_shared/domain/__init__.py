"""Domain records and rules: jobs, tasks, statuses, the job spec, identities."""
