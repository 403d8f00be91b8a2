"""The dealing service: audience display, technical judge's console, director's console (FastAPI)."""
