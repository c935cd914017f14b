"""Firecrawl's shapes both services speak: a task's result as a Firecrawl ``Document`` (the
dispatcher's /v2 answers) and Firecrawl's webhook bodies (the worker's deliveries)."""
