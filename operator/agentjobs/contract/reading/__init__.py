"""Reading an agent's or a grader's log for its block: plain text and the CLIs' JSON events
(R1-R13, R39).
"""
