"""Retrievers behind one protocol (`base.Retriever`: `retrieve(question, graph=…) -> Retrieval`): the paper's
static retrieval over Neo4j (`neo4j`) or over graphs held in memory (`cached`), the learned retriever
(`learned`) and zero-shot relation paths (`paths`). They share a `RetrievalContext` and one `Recorder`, which
stores every retrieval so that it opens in Neo4j Browser (`browser`)."""
