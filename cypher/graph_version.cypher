// The version of a stored graph: the last completed change's (null for a graph written before versions existed,
// or whose first change is still under way).
// params: $graph
MATCH (g:Graph {id: $graph})
RETURN g.version AS version
