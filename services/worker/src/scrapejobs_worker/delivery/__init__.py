"""The push-delivery skeleton every lane shares: decode, deadline, verdict, metrics, and who may
push."""
