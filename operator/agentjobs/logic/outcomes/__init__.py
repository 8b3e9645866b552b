"""The outcome loop (R37-R44): a rubric, a grader in its own pod, and a revise loop."""
