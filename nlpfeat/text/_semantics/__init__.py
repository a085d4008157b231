"""Word and document meaning: PMI embeddings, semantic units, ESA, similarity ensembles."""
