"""Every rule a submission passes, one module each, run by one pipeline (rules.py) that every
entry point goes through (``/v1`` jobs and scrape, ``/v2``, schedules, monitors and their
checks, retry, replay):

* served_options.py: what this deployment serves (an ``ai`` stage needs a provider and an
  offered model; ``verify_tls`` false needs SCRAPEJOBS_ALLOW_UNVERIFIED_TLS).
* pattern_budget.py: how many regular expressions a job holds, each compiled within its memory
  budget off the event loop.
* daily_quota.py: the tenant's pages a day (pages_per_day).

A rule of what a job *is* (``shape``) holds for a monitor's definition too; a rule of what it
*takes* (``admission``) is checked when the work is accepted. A new rule is one module here
and one line where the pipeline is built (main.py).
"""
