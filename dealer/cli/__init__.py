"""The ``dealer`` command line."""
