// Opens a change of these graphs ($state: 'writing' or 'dropping'): readers keep answering from the version the
// record names until `graphs_change_end` (or, for a drop, the record's deletion) closes it. A graph not stored yet
// gets a record without a version: nobody can read it before its first change completes. The store's version
// high-water mark is raised to these graphs' versions, so that versions drawn later (after a drop) lie above them.
// params: $graphs, $state
UNWIND $graphs AS g
MERGE (x:Graph {id: g.id})
ON CREATE SET x.dataset = g.dataset, x.kind = g.kind, x.created = datetime()
SET x.state = $state, x.state_since = datetime()
WITH collect(x) AS records
OPTIONAL MATCH (m:GqaMeta {id: 'schema'})
WITH m, reduce(top = coalesce(m.graph_versions, 0), r IN records |
               CASE WHEN coalesce(r.version, 0) > top THEN r.version ELSE top END) AS top
FOREACH (_ IN CASE WHEN m IS NULL THEN [] ELSE [1] END | SET m.graph_versions = top)
