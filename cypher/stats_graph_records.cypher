// Every stored graph's record (empty graphs included), for per-graph statistics.
// params:
MATCH (g:Graph)
RETURN g.id AS graph, g.dataset AS dataset, g.kind AS kind
