"""DynamoDB plumbing shared by every capability: table definition, client, codecs, error mapping, the read and
write helpers (ops), the idempotent command loop (commands), saved results, item keys and item sizes."""
