// The embedder the stored vectors were made with; absent on an empty database.
// params:
MATCH (m:GqaMeta {id: 'schema'}) RETURN m.embedder AS embedder, m.dim AS dim
