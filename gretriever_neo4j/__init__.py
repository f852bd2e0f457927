"""gqa: question answering over textual graphs stored in Neo4j (G-Retriever as software).

Data flows one way: loaders -> store -> retrieval -> model -> cli.
"""

__version__ = "0.1.0"
