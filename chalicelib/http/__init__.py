"""The HTTP adapter: JSON bodies, responses, authentication and the route table's dispatch."""
