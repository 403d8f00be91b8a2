"""The open wire protocol of dealing machines and card scanners: specification (PROTOCOL.md), message table,
sans-I/O codec, link and connection state machines, test vectors, and a reference C library for devices (c/)."""
