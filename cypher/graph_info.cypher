// A stored graph's dataset, kind and version (every write to the graph bumps the version).
// params: $graph
MATCH (g:Graph {id: $graph})
RETURN g.id AS id, g.dataset AS dataset, g.kind AS kind, g.version AS version
