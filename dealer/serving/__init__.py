"""HTTP plumbing the hall's web service and the relays share, under both and over the application layer.

Listening sockets that take a few connections per loop turn (``accept``), per-address and total connection caps
with the server's options (``guard``), request limits and their error answers (``limits``), the public streams'
lean ASGI front (``public_stream``), the request's language with the pages' catalogues (``i18n``) and where the
pages' files are (``pages``). No route and no page: those are ``dealer.web``'s.
"""
