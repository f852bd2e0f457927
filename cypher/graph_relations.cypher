// The relation texts of one graph and their vectors.
// params: $graph
MATCH (t:Relation {graph: $graph})
RETURN t.text AS text, t.embedding AS embedding
