// params:
CREATE INDEX rel_graph IF NOT EXISTS FOR ()-[r:REL]-() ON (r.graph)
