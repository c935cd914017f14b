"""The worker's lanes: what a push of each kind becomes (a batch to fetch, a batch's ``ai`` stage,
a dead letter, a webhook event)."""
