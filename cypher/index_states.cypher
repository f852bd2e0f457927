// Our indexes and whether they are usable.
// params:
SHOW INDEXES YIELD name, type, state, populationPercent, options
WHERE name IN ['node_embedding', 'relation_embedding', 'node_text']
RETURN name, type, state, populationPercent, options
