"""Our view of Beto: Projects, Project bindings, Parties' Site bindings, usernames,
memberships and accepted items, fed by Beto's events (newest revision wins)."""
