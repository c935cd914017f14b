"""Politeness toward each host, in one package: everything that decides when a page of a host
may be fetched, and what a response teaches about its host.

* ``host_key``: a URL's host as the unit of politeness (scheme, host, port), robots.txt URLs.
* ``robots_rules``: robots.txt per RFC 9309 (Protego), the product token's group; the
  dispatcher's /v2/map filters links with them. ``robots_cache``: robots.txt per origin,
  fetched through the worker's safe fetcher and cached; ``Crawl-delay`` becomes spacing.
* ``host_gate``: the ``HostGate`` port shared by every instance (slots, spacing, breaker,
  Retry-After holds, wants); its adapters are ``adapters/firestore/host_gate.py`` and
  ``adapters/memory/host_gate.py``. ``warm_slot_gate``: slots a process keeps warm for its
  next batch, and fair shares between processes (wraps any HostGate).
* ``admission``: ``Politeness`` turns a job's options into host limits and admits a fetch
  with a permit from the gate; lanes of a process wait in one ``HostQueue`` per host.
* ``retry_after`` and ``status_policy``: what a response says about its host (a Retry-After
  hold, a host-level failure for the circuit breaker); the worker's outcome table
  (``scrapejobs_worker.tasks.outcome_policy``) applies them.

The dispatcher shows a host's state at ``GET /v1/hosts`` (``routes/hosts.py``); docs/semantics.md
says what users see.
"""
