"""DynamoDB plumbing shared by every capability: table definition, client, codecs, error mapping."""
