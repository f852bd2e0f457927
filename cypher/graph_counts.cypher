// What `gqa drop` would remove from one graph: its nodes, relationships, questions and recorded retrievals, and
// whether a (:Graph) record names it.
// params: $graph
CALL () { MATCH (n:Node {graph: $graph}) RETURN count(n) AS nodes }
CALL () { MATCH ()-[r:REL {graph: $graph}]->() RETURN count(r) AS edges }
CALL () { MATCH (q:Question) WHERE q.graph = $graph RETURN count(q) AS questions }
CALL () { MATCH (x:Retrieval) WHERE x.graph = $graph RETURN count(x) AS retrievals }
CALL () { OPTIONAL MATCH (g:Graph {id: $graph}) RETURN g IS NOT NULL AS recorded, g.dataset AS dataset, g.kind AS kind }
RETURN nodes, edges, questions, retrievals, recorded, dataset, kind
