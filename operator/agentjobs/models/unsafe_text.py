"""The characters that no string an agent wrote may carry into a status, an Event or a
terminal (R56), as regular-expression ranges: they move a terminal's cursor, retitle it,
ring it, or show text in another order than it is stored."""

# C0 but tab and line feed, DEL, C1.
CONTROLS = "\x00-\x08\x0b-\x1f\x7f-\x9f"
# Bidirectional marks, embeddings, overrides and isolates.
BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
