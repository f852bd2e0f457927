// params: $graph
MATCH (g:Graph {id: $graph})
RETURN g.id AS id, g.dataset AS dataset, g.kind AS kind
