// Gives a graph a new version without writing to it otherwise, drawn above every version the store has given
// (`GqaMeta.graph_versions`), so that the in-memory caches of `gqa serve` let go of what they hold of it.
// params: $graph
MATCH (g:Graph {id: $graph})
OPTIONAL MATCH (m:GqaMeta {id: 'schema'})
WITH g, m, CASE WHEN coalesce(m.graph_versions, 0) > coalesce(g.version, 0) THEN coalesce(m.graph_versions, 0)
                ELSE g.version END + 1 AS next
SET g.version = next
FOREACH (_ IN CASE WHEN m IS NULL THEN [] ELSE [1] END | SET m.graph_versions = next)
RETURN g.version AS version
