"""Politeness toward each host, as the worker applies it: the whole admission story of a task.

* ``robots_cache``: robots.txt per origin, fetched through the safe fetcher, parsed by the
  shared ``robots_rules`` (RFC 9309, Protego) and cached; ``Crawl-delay`` becomes spacing.
* ``admission``: ``Politeness`` turns a job's options into host limits and admits a fetch with
  a permit from the shared host gate; lanes of a process wait in one ``HostQueue`` per host.
* ``retry_after`` and ``http_status_policy``: what a response says about its host (a
  ``Retry-After`` hold, a host-level failure for the circuit breaker) — the outcome table
  (``outcome_policy``) applies them.

Shared by every instance and the dispatcher, in ``scrapejobs_shared``: the ``HostGate`` port
(``ports/host_gate.py``: slots, spacing, breaker, wants), its Firestore and in-memory adapters
(``adapters/*/host_gate.py``), warm slots and fair shares between processes
(``politeness/warm_slot_gate.py``), host keys (``politeness/host_key.py``) and robots.txt
rules (``politeness/robots_rules.py``: the dispatcher's /v2/map filters links with them).
The dispatcher shows a host's state at ``GET /v1/hosts`` (``routes/hosts.py``).
"""
