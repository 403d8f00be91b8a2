"""The open wire protocol of dealing machines and card scanners: specification, message table, sans-I/O codec."""
