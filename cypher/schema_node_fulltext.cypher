// Fulltext (Lucene) index on node text, for entity linking by name.
// params:
CREATE FULLTEXT INDEX node_text IF NOT EXISTS FOR (n:Node) ON EACH [n.text]
