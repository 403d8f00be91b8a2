"""Public relays: the hall service's public messages on a NATS JetStream stream, served to remote viewers."""
