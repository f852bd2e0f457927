"""The reader's cache of text vectors (reader/text_vectors.py)."""

from __future__ import annotations

import numpy as np

from gretriever_neo4j.reader.text_vectors import TextVectors

from fakes import FakeEmbedder


def test_text_vectors_embed_each_text_once_and_stay_bounded():
    embedder = FakeEmbedder()
    vectors = TextVectors(embedder.embed, capacity=3)
    first = vectors(["a b", "c d"])
    again = vectors(["c d", "a b"])
    assert np.allclose(first[::-1], again)
    assert sum(len(call) for call in embedder.calls) == 2
    assert np.allclose(np.linalg.norm(first, axis=1), 1.0)
    vectors(["e", "f", "g", "h"])
    assert len(vectors._known) == 3
