// params: $embedder, $dim, $layout
MERGE (m:GqaMeta {id: 'schema'}) SET m.embedder = $embedder, m.dim = $dim, m.layout = $layout, m.updated = datetime()
