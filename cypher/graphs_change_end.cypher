// Closes a change of these graphs: readers see the new contents as one step. $bump: the change wrote or deleted
// something, so the graphs get a new version (drawn as in `graphs_upsert`) and caches reload them; a graph this
// change created gets its first version either way.
// params: $graphs, $bump
MATCH (x:Graph) WHERE x.id IN $graphs
REMOVE x.state, x.state_since
WITH collect(x) AS records
WITH [r IN records WHERE $bump OR r.version IS NULL] AS bumped
OPTIONAL MATCH (m:GqaMeta {id: 'schema'})
WITH bumped, m, reduce(top = coalesce(m.graph_versions, 0), r IN bumped |
                       CASE WHEN coalesce(r.version, 0) > top THEN r.version ELSE top END) + 1 AS next
FOREACH (r IN bumped | SET r.version = next)
FOREACH (_ IN CASE WHEN m IS NULL OR size(bumped) = 0 THEN [] ELSE [1] END | SET m.graph_versions = next)
