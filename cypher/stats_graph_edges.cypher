// Edges per graph (and its dataset), and how many carry a vector.
// params:
MATCH ()-[r:REL]->()
RETURN r.graph AS graph, r.dataset AS dataset, count(r) AS edges, count(r.embedding) AS embedded
