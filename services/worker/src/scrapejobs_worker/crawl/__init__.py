"""Crawl jobs: which links and sitemap pages of a crawled page become new tasks."""
