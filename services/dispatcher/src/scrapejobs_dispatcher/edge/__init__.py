"""The HTTP edge: request bodies bounded and decoded, repeated query parameters refused,
the OpenAPI document as this deployment accepts requests."""
