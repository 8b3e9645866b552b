"""R13-R13f: what each agent CLI's JSON events mean, one module per CLI behind one interface."""
