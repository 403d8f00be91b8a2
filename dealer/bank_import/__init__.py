"""Importing deal files into a bank: read every file of a collection (``file_reading``, over ``dealer.formats``),
plan what is new (``importer``), commit it in batches through the bank's ``Imports`` protocol, and report it
(``import_json`` for machines). Beside the formats, above the bank: storage knows nothing of files.
"""
