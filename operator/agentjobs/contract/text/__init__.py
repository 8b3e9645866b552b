"""What agents write, made safe: ANSI, lines, blocks, JSON bodies, usage, substance (R1, R13f,
R32, R55, R56).
"""
