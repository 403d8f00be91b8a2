"""What makes the bank's record provable, on its own: the ledger entry's canonical form and hash chain
(``ledger``), the Merkle tree over the entries (``merkle``), the Ed25519 signature check (``keys``) and the
anchors noted outside a bank (``anchors``). Pure: no storage, no engine. ``dealer.bank`` stores by these rules
and ``dealer.draw`` proves with them; neither lends its copy to the other.
"""
