"""`POST /resource-provisioning/{site}/reports`: apply one resource report."""
