"""Export to the boxes: board numbering, deal files for other software, board making on a machine."""
