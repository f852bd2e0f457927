// params:
CREATE INDEX retrieval_graph IF NOT EXISTS FOR (r:Retrieval) ON (r.graph)
