// params: $layout
MATCH (m:GqaMeta {id: 'schema'}) SET m.layout = $layout, m.updated = datetime()
