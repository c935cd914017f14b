"""One task of a batch: admissions, the fetch, the decision, what the host's politeness state
learns."""
