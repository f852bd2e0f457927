// Edges per graph, and how many carry a vector.
// params:
MATCH ()-[r:REL]->()
RETURN r.graph AS graph, count(r) AS edges, count(r.embedding) AS embedded
