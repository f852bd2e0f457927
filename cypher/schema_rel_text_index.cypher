// Edges of one graph with one relation text (a relation's seed edges; what `--sync` leaves of a relation).
// params:
CREATE INDEX rel_graph_text IF NOT EXISTS FOR ()-[r:REL]-() ON (r.graph, r.text)
