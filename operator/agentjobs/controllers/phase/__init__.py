"""A Phase's runner: it performs the step the phase core returns and writes the status it built."""
