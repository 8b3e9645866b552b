"""The outcome loop: a grader's evaluation and the revisions it asks for (R37-R44)."""
