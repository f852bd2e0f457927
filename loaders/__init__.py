"""Dataset loaders: pure parsers from publishers' files to `GraphRecord`s and `QuestionRecord`s.

Every loader offers `DATASET`, `KIND` ("kg" or "per-sample") and
`read(source, *, limit=None, on_bad_row=None, **options) -> Iterator[GraphRecord | QuestionRecord]`.
Records are produced lazily and deterministically. Bad input raises `InputError` naming file and line
(or field); given `on_bad_row`, the loader reports the error to it and skips the row instead (`--skip-bad`).
Missing files always raise. No loader touches the database or a model.
"""

from __future__ import annotations

from gretriever_neo4j.errors import ConfigError
from gretriever_neo4j.loaders import explagraphs, metaqa, rdf, scenegraphs, usergraph, webqsp
from gretriever_neo4j.loaders._common import Loader, OnBadRow

LOADERS: dict[str, Loader] = {
    "webqsp": webqsp,
    "explagraphs": explagraphs,
    "scenegraphs": scenegraphs,
    "metaqa": metaqa,
    "csv": usergraph.CSV,
    "triples": usergraph.TRIPLES,
    "rdf": rdf,
}


def get_loader(name: str) -> Loader:
    """The loader registered as `name`; ConfigError listing the known names otherwise."""
    try:
        return LOADERS[name]
    except (KeyError, TypeError):
        raise ConfigError(f"unknown dataset {name!r}; known: {', '.join(LOADERS)}") from None


__all__ = ["LOADERS", "Loader", "OnBadRow", "get_loader"]
