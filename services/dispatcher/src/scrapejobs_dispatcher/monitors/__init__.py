"""Users' monitors: their service, the tick that starts their checks, a check's run, and
the comparison of a page with its previous scrape (change tracking)."""
