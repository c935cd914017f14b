"""Submitting jobs: the Submission value every entry point builds, the one way in
(idempotent.py), coalesced one-URL submissions, their metrics, a scrape answered in its
request, and the rules a submission passes (rules/)."""
