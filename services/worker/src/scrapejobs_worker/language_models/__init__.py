"""Adapters of the language-model port (model_port.py), one per provider."""
