"""Files uploaded to be read (``POST /v1/parse``, Firecrawl's ``/v2/parse``): each read in a
process of its own within a CPU and memory budget, its result kept as a finished one-page job
of the tenant's."""
