// The embedder the stored vectors were made with, and the store's layout (null: written before layouts were
// numbered, edges carrying their own vectors); absent on an empty database.
// params:
MATCH (m:GqaMeta {id: 'schema'}) RETURN m.embedder AS embedder, m.dim AS dim, m.layout AS layout
