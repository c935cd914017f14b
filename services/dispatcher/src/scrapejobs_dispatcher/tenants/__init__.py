"""Tenants and who they are: API keys and the keyring, authentication (keys, Google
identities, IAP), quotas, usage."""
