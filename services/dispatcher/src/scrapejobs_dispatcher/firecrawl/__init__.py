"""The Firecrawl-compatible ``/v2`` API: Firecrawl's requests and answers, translated to and
from native jobs (one job per scrape or batch), so Firecrawl's SDKs work unmodified.

* ``request_models``: the bodies Firecrawl's SDKs send, with every option this service cannot
  honour refused by name;
* ``translation``: a body as a native ``JobRequest``;
* ``documents``: a task's result as a Firecrawl ``Document``;
* ``errors``: Firecrawl's error shape (``{"success": false, "error"}``) for every /v2 failure;
* ``routes``: the endpoints.
"""
