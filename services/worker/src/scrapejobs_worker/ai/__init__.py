"""The ``ai`` stage: the model port, its slots across instances, and asking a model about
one page."""
