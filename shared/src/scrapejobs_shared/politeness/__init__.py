"""Per-host politeness pieces shared by the services (host keys, warm slots, robots.txt)."""
