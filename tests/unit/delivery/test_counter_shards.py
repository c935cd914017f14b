"""A job's counter shards: a few batches a shard, at most ``MAX_COUNTER_SHARDS``; a crawl
counted for the pages it may find, not for the one batch it starts with."""

from __future__ import annotations

from scrapejobs_shared.delivery.batching import BATCHES_PER_SHARD, MAX_COUNTER_SHARDS, shards_for


def test_a_list_of_urls_has_a_shard_for_every_few_batches() -> None:
    assert shards_for(1) == 1
    assert shards_for(BATCHES_PER_SHARD + 1) == 2
    assert shards_for(100) == 25
    assert shards_for(1_000) == 250  # 100,000 URLs: make scale's many-hosts at a tenth
    assert shards_for(10_000) == MAX_COUNTER_SHARDS


def test_a_crawl_is_counted_for_the_pages_it_may_find() -> None:
    assert shards_for(1, crawl_pages=1) == 1
    assert shards_for(1, crawl_pages=40) == 10
    assert shards_for(1, crawl_pages=10_000) == MAX_COUNTER_SHARDS
