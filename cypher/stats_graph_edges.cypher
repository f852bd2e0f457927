// Edges per graph (and its dataset), and how many have their relation's vector.
// params:
MATCH ()-[r:REL]->()
WITH r.graph AS graph, r.dataset AS dataset, r.text AS text, count(r) AS edges
OPTIONAL MATCH (t:Relation {graph: graph, text: text})
RETURN graph, dataset, sum(edges) AS edges, sum(CASE WHEN t.embedding IS NULL THEN 0 ELSE edges END) AS embedded
