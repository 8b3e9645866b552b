"""The phase core: the step a Phase's runner takes next and every status it writes."""
