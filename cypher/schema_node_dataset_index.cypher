// params:
CREATE INDEX node_dataset IF NOT EXISTS FOR (n:Node) ON (n.dataset)
