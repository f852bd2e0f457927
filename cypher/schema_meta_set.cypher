// params: $embedder, $dim
MERGE (m:GqaMeta {id: 'schema'}) SET m.embedder = $embedder, m.dim = $dim, m.updated = datetime()
