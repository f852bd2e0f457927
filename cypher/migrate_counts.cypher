// What `gqa db migrate` checks before and after: edges, edges that carry a vector of their own, distinct
// (graph, text) of the edges, those of them some edge carried a vector for, and those with a (:Relation) that
// has one.
// params:
CALL () { MATCH ()-[r:REL]->() RETURN count(r) AS edges, count(r.embedding) AS edge_vectors }
CALL () {
  MATCH ()-[r:REL]->()
  WITH r.graph AS graph, r.text AS text, count(r.embedding) AS carried
  OPTIONAL MATCH (t:Relation {graph: graph, text: text})
  RETURN count(*) AS texts, count(CASE WHEN carried > 0 THEN 1 END) AS texts_carried,
         count(t.embedding) AS relation_vectors
}
RETURN edges, edge_vectors, texts, texts_carried, relation_vectors
