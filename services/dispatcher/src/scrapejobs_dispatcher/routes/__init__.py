"""HTTP routes of the dispatcher."""
