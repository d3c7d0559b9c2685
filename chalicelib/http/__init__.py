"""The HTTP adapter: the API-family framework (route tables, credentials, errors) and each family's conventions."""
