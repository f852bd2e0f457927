"""Answering a retrieved subgraph (`Answering.answer(retrieval) -> Answer`): grounded answers for knowledge
graphs (the reader chooses nodes, a trie-constrained LLM says them: `grounded`), a label for classification
datasets, or the paper's free text with checked citations. Loads each reader and generator once."""
