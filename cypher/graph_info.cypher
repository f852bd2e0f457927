// A stored graph's dataset, kind, version and state: the version is the last completed change's (null: none has
// completed yet, or the graph was written before versions existed); the state is null, or 'writing' / 'dropping'
// while a change is under way (`graphs_change_begin`).
// params: $graph
MATCH (g:Graph {id: $graph})
RETURN g.id AS id, g.dataset AS dataset, g.kind AS kind, g.version AS version, g.state AS state
