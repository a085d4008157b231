"""Word association: co-occurrence counts, PMI, association measures, collocations."""
