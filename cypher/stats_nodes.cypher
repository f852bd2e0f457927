// params:
MATCH (n:Node)
RETURN n.dataset AS dataset, count(n) AS nodes, count(n.embedding) AS embedded, count(DISTINCT n.graph) AS graphs
