// params: $id
MATCH (r:Retrieval {id: $id})
RETURN r.id AS id, r.question AS question, r.graph AS graph, r.params AS params, toString(r.created) AS created,
       r.node_ids AS node_refs, r.rel_ids AS rel_refs, r.textualized AS textualized, r.timings AS timings
