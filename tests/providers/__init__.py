"""Provider adapter tests against a local HTTP server."""
