// `gqa db migrate`, step 1 of 2 (auto-commit: batches commit as they go, so a run cut short is run again): one
// (:Relation) per (graph, text) of the stored edges, its vector copied from one edge that carries one.
// Re-runnable: a relation that has its vector is left alone.
// params: $batch
MATCH ()-[r:REL]->()
WITH r.graph AS graph, r.text AS text, min(r.dataset) AS dataset,
     min(CASE WHEN r.embedding IS NULL THEN null ELSE elementId(r) END) AS donor
CALL (graph, text, dataset, donor) {
  MERGE (t:Relation {graph: graph, text: text})
  ON CREATE SET t.dataset = dataset
  WITH t WHERE t.embedding IS NULL AND donor IS NOT NULL
  MATCH ()-[d:REL]->() WHERE elementId(d) = donor
  CALL db.create.setNodeVectorProperty(t, 'embedding', d.embedding)
} IN TRANSACTIONS OF $batch ROWS
