"""The verifiable draw (DESIGN.md §5): commit, public value, Rivest's sampler, reveal, bundle, verify."""
