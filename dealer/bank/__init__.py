"""The deal bank: durable store, hash-chained ledger, seals, imports and the draw."""
