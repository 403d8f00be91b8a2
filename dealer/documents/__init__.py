"""Documents to print and sign (PDF, Russian or English): the bank formation act, the draw protocol and its
sealed annex, the board-making act and the equipment check act; each numbered, dated and recorded in the
ledger by its SHA-256 when issued. ``dealer docs …`` and the consoles issue them (docs/documents.md)."""
