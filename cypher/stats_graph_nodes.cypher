// Nodes per graph, and how many carry a vector.
// params:
MATCH (n:Node)
RETURN n.graph AS graph, n.dataset AS dataset, count(n) AS nodes, count(n.embedding) AS embedded
