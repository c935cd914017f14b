"""Configuration read from the environment."""
