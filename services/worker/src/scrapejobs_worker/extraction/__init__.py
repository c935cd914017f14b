"""Extraction of fetched pages in budgeted processes of their own, and the stages after ``ai`` on
the worker's CPU."""
