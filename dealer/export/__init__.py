"""Export to the boxes: board numbering, deal files for other software, board making on a machine.

Entry points: ``boards.boards_from_pairs`` / ``boards.number_deals`` (a session's drawn deals as boards),
``files.write_session_files`` (DLM sealed, DUP, PBN, … atomically), ``machine.BoardMaker`` (make and check
every copy on a machine, resumable), and ``dealer.handrecords.publish.publish`` (hand records, gated).
"""
