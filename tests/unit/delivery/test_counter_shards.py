"""A job's counter shards: a shard a batch, at most ``MAX_COUNTER_SHARDS``; a crawl
counted for the pages it may find, not for the one batch it starts with."""

from __future__ import annotations

from scrapejobs_shared.delivery.batching import BATCHES_PER_SHARD, MAX_COUNTER_SHARDS, shards_for


def test_a_list_of_urls_has_a_shard_for_every_few_batches() -> None:
    assert shards_for(1) == 1
    assert shards_for(BATCHES_PER_SHARD + 1) == 2
    assert shards_for(2) == 2  # a monitor's check of 1,000 pages: two batches of 500
    assert shards_for(100) == 100  # 10,000 URLs
    assert shards_for(1_000) == MAX_COUNTER_SHARDS
    assert shards_for(10_000) == MAX_COUNTER_SHARDS


def test_a_crawl_is_counted_for_the_pages_it_may_find() -> None:
    assert shards_for(1, crawl_pages=1) == 1
    assert shards_for(1, crawl_pages=40) == 40
    assert shards_for(1, crawl_pages=10_000) == MAX_COUNTER_SHARDS
