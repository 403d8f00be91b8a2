"""The public stream beyond the hall: its wire format on NATS JetStream and the hall service's publisher.

Apart from ``dealer.relay`` (the relay server, an edge beside ``dealer.web``) so that the web service can publish
and the relays can read without the two packages importing each other.
"""
