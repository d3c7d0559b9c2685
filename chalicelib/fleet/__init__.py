"""Fleet: a tenant's platform objects as one document (export, plan, apply, status) and its drift reconciler."""
