// Opens a feedback on one retrieval by write-locking its graph's record until the transaction ends: a drop (which
// marks the record first) then either waits for the feedback to commit, and deletes its question with the others,
// or has marked the graph before, which the returned state says. No row: the retrieval is not recorded.
// params: $id
MATCH (r:Retrieval {id: $id})
OPTIONAL MATCH (g:Graph {id: r.graph})
FOREACH (_ IN CASE WHEN g IS NULL THEN [] ELSE [1] END | SET g.feedback_at = datetime())
RETURN r.graph AS graph, g IS NOT NULL AS recorded, g.state AS state, g.version AS version
