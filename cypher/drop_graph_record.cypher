// Deletes the (:Graph) record of a graph, last, once its nodes, edges, questions and retrievals are gone: until
// then an interrupted `gqa drop` can be run again and finds the graph.
// params: $graph
MATCH (g:Graph {id: $graph})
DELETE g
RETURN count(g) AS deleted
