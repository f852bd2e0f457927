// What changes whenever the store's contents do: label and type counts (constant time, from Neo4j's count store)
// and the sum of the graph versions every write bumps. `gqa serve` recomputes its dataset statistics (a full scan)
// only when this changes.
// params:
CALL () { MATCH (n:Node) RETURN count(n) AS nodes }
CALL () { MATCH ()-[r:REL]->() RETURN count(r) AS edges }
CALL () { MATCH (q:Question) RETURN count(q) AS questions }
CALL () { MATCH (g:Graph) RETURN count(g) AS graphs, sum(coalesce(g.version, 0)) AS versions }
RETURN nodes, edges, questions, graphs, versions
