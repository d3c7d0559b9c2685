"""Running the service on a laptop: an HTTP front that plays API Gateway, and an embedded store."""
