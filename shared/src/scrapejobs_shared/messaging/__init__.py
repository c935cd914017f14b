"""The Pub/Sub message format and topology (names and delivery settings)."""
