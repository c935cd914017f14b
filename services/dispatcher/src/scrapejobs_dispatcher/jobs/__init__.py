"""Jobs once submitted: reading, cancelling, deleting, exporting their results, their views
and stats, and the recovery of work that stopped moving."""
