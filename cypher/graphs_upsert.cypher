// Creates the graphs a batch writes to. A graph that no change holds open (`graphs_change_begin`) gets a new
// version, drawn above every version the store has given (`GqaMeta.graph_versions`), so that a graph dropped and
// written again never repeats a version; a graph inside a change keeps its version until the change ends.
// A row with a source (an ingest's: `ingest.graphs.GraphSource`) records where the graph was read from, replacing
// what an earlier ingest recorded; a row without one leaves it.
// params: $graphs
UNWIND $graphs AS g
MERGE (x:Graph {id: g.id})
ON CREATE SET x.dataset = g.dataset, x.kind = g.kind, x.created = datetime()
FOREACH (_ IN CASE WHEN g.source IS NULL THEN [] ELSE [1] END |
  SET x.source = g.source, x.source_query = g.source_query, x.source_element_ids = g.source_element_ids)
WITH collect(x) AS records
WITH [r IN records WHERE r.state IS NULL] AS bumped
OPTIONAL MATCH (m:GqaMeta {id: 'schema'})
WITH bumped, m, reduce(top = coalesce(m.graph_versions, 0), r IN bumped |
                       CASE WHEN coalesce(r.version, 0) > top THEN r.version ELSE top END) + 1 AS next
FOREACH (r IN bumped | SET r.version = next)
FOREACH (_ IN CASE WHEN m IS NULL OR size(bumped) = 0 THEN [] ELSE [1] END | SET m.graph_versions = next)
