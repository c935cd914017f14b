"""Web search: a provider behind the SearchEngine port (SearXNG), the searches a caller asks
for (cached per tenant a short while), and their results scraped through the queue."""
