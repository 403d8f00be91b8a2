"""Dealing side of sports-bridge tournaments."""

__version__ = "0.1.0"
