// The version of a stored graph: every write to it bumps it (null for a graph written before versions existed).
// params: $graph
MATCH (g:Graph {id: $graph})
RETURN g.version AS version
