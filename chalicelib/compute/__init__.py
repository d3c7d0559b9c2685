"""The compute API: RPC methods `POST /api/compute/<module>/<method>` for tenant principals."""
