"""GQA scene graphs with G-Retriever's question table: one graph per image, questions over it.

Source format
    * Scene graphs in GQA's JSON (`train_sceneGraphs.json`, `val_sceneGraphs.json`):
      `{image_id: {"width", "height", "objects": {object_id: {"name", "x", "y", "w", "h",
      "attributes": [...], "relations": [{"name", "object"}, ...]}, ...}}, ...}`.
    * `questions.csv` as G-Retriever's `src/dataset/scene_graphs.py` reads it: a header with at least
      `image_id`, `question`, `answer` (it also has `full_answer`, not stored: records have no field for
      it); any other columns are ignored except an optional `split` or `set` column.
    `source` is a folder holding every `*_sceneGraphs.json` and `questions.csv`; the options
    `scene_graphs=` (one path or a list of paths) and `questions=` override either. Each JSON file is read
    whole with the standard json module: the full GQA train file (~GBs) then needs several times its size
    in memory. That is accepted; questions are still streamed.

Records (per-sample)
    Questions are read in file order; row i counts data rows from 0. The first question about an image
    emits that image's GraphRecord(graph_id=f"scenegraphs/{image_id}"); then comes
    QuestionRecord(qid=str(i) (G-Retriever's `id`), text=question as written (G-Retriever's
    `Question: ...\\n\\nAnswer:` wrapping is left to the prompt builder), answers=[answer]).
    Nodes follow G-Retriever's `textualize_graph` (`src/dataset/preprocess/scene_graphs.py`): keys are local
    ids "0", "1", ... in object order; text is `name: {name}; attribute: {a}, {b}; (x,y,w,h): ({x}, {y},
    {w}, {h})`, the attribute part left out when the object has none, numbers written as Python writes
    them. Each relation is an edge from its object to `relation.object`, text = relation name.
    Images that no question mentions are not emitted. `limit` caps the number of questions.

Bad input
    A relation to an object id the image does not have, or a malformed object, makes the image bad:
    one InputError naming the JSON file and the field path (`{image}.objects.{obj}.relations[k].object`);
    with `on_bad_row` that error is reported once and every question about the image is reported and
    skipped. A question about an image absent from the scene graphs, or a row with a wrong field count,
    is a bad row (file and line).

Split
    A `split`/`set` column is kept (train/val/test, with the usual aliases). Otherwise the split of
    G-Retriever's latest `generate_split` in `src/dataset/preprocess/scene_graphs.py`: unique image ids in
    order of first appearance, `np.random.seed(42); np.random.permutation(...)`, then sklearn
    `train_test_split(test_size=0.4, random_state=42)` and the 40% part again with `test_size=0.5` into
    val and test; a question takes its image's split. It is computed over the whole questions file
    whatever `limit` is. (An older G-Retriever `preprocess/gqa.py` split question indices 60/20/20 instead.)

Provenance
    GQA (Hudson & Manning, CVPR 2019), scene graphs from Visual Genome, CC BY 4.0. The question table is the
    100,000-question sample distributed with G-Retriever (MIT). No scene graph data is bundled here;
    tests use small fixtures written in the same format.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from gretriever_neo4j.errors import InputError
from gretriever_neo4j.loaders._common import (
    GraphBuilder,
    OnBadRow,
    check_limit,
    csv_rows,
    header_positions,
    normalise_split,
    paper_split,
    reject,
    reject_unknown_options,
    require_dir,
    require_file,
    require_source,
)
from gretriever_neo4j.records import GraphRecord, QuestionRecord, Record

DATASET = "scenegraphs"
KIND = "per-sample"
QUESTIONS_FILE_NAME = "questions.csv"
SCENE_GRAPH_GLOB = "*_sceneGraphs.json"
REQUIRED_COLUMNS = ("image_id", "question", "answer")
SPLIT_COLUMNS = ("split", "set")
SPLIT_SEED = 42


def read(source: str | Path | None = None, *, limit: int | None = None, on_bad_row: OnBadRow | None = None,
         scene_graphs: str | Path | Sequence[str | Path] | None = None, questions: str | Path | None = None,
         **options: object) -> Iterator[Record]:
    """Stream, per question, its image's GraphRecord (first time only) then its QuestionRecord."""
    reject_unknown_options(DATASET, options)
    limit = check_limit(limit)
    graph_paths, questions_path = _resolve_paths(source, scene_graphs, questions)
    return _records(graph_paths, questions_path, limit, on_bad_row)


def node_text(name: str, attributes: Sequence[str], x: float, y: float, w: float, h: float) -> str:
    """An object's textual node, exactly as G-Retriever writes it."""
    text = f"name: {name}"
    if attributes:
        text += "; attribute: " + ", ".join(attributes)
    return text + "; (x,y,w,h): (" + ", ".join(repr(value) for value in (x, y, w, h)) + ")"


def graph_record(image_id: str, scene: object, source: Path) -> GraphRecord:
    """One image's scene graph as a GraphRecord; InputError (with the field path) for malformed input."""
    where = image_id
    if not isinstance(scene, Mapping) or not isinstance(scene.get("objects"), Mapping):
        raise InputError("scene graph has no 'objects' mapping", source=source, field=f"{where}.objects")
    objects: Mapping = scene["objects"]
    local_ids = {object_id: str(position) for position, object_id in enumerate(objects)}
    builder = GraphBuilder()
    for object_id, scene_object in objects.items():
        field = f"{where}.objects.{object_id}"
        builder.add_node(local_ids[object_id], _object_text(scene_object, source, field))
        for position, relation in enumerate(_list(scene_object, "relations", source, field)):
            relation_field = f"{field}.relations[{position}]"
            if not isinstance(relation, Mapping) or not isinstance(relation.get("name"), str):
                raise InputError("relation needs a string 'name' and an 'object'", source=source,
                                 field=relation_field)
            target = relation.get("object")
            if target not in local_ids:
                raise InputError(f"relation '{relation['name']}' points at unknown object {target!r}",
                                 source=source, field=f"{relation_field}.object")
            builder.add_edge(local_ids[object_id], relation["name"], local_ids[target])
    return builder.build(graph_id=f"{DATASET}/{image_id}", dataset=DATASET, kind=KIND, source=source, line=None)


def _object_text(scene_object: object, source: Path, field: str) -> str:
    if not isinstance(scene_object, Mapping):
        raise InputError("object must be a JSON object", source=source, field=field)
    name = scene_object.get("name")
    if not isinstance(name, str) or not name:
        raise InputError("object needs a non-empty string 'name'", source=source, field=f"{field}.name")
    box = []
    for coordinate in ("x", "y", "w", "h"):
        value = scene_object.get(coordinate)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise InputError(f"'{coordinate}' must be a number, found {value!r}", source=source,
                             field=f"{field}.{coordinate}")
        box.append(value)
    attributes = _list(scene_object, "attributes", source, field)
    if not all(isinstance(attribute, str) for attribute in attributes):
        raise InputError("'attributes' must be a list of strings", source=source, field=f"{field}.attributes")
    return node_text(name, attributes, *box)


def _list(scene_object: Mapping, key: str, source: Path, field: str) -> list:
    """A list-valued member; a missing one counts as empty (some GQA exports omit empty lists)."""
    value = scene_object.get(key, [])
    if not isinstance(value, list):
        raise InputError(f"'{key}' must be a list", source=source, field=f"{field}.{key}")
    return value


# --- sources ---------------------------------------------------------------------------------------

def _resolve_paths(source, scene_graphs, questions) -> tuple[list[Path], Path]:
    folder = None
    if scene_graphs is None or questions is None:
        folder = require_dir(require_source(
            DATASET, source, "a folder with *_sceneGraphs.json and questions.csv (or scene_graphs= and questions=)"),
            "scene graph folder")
    if scene_graphs is None:
        graph_paths = sorted(folder.glob(SCENE_GRAPH_GLOB))
        if not graph_paths:
            raise InputError(f"folder holds no {SCENE_GRAPH_GLOB} file", source=folder)
    elif isinstance(scene_graphs, (str, Path)):
        graph_paths = [Path(scene_graphs)]
    else:
        graph_paths = [Path(path) for path in scene_graphs]
    for path in graph_paths:
        require_file(path, "scene graph JSON")
    questions_path = require_file(Path(questions) if questions is not None else folder / QUESTIONS_FILE_NAME,
                                  "questions CSV")
    return graph_paths, questions_path


def _load_scene_graphs(paths: list[Path]) -> dict[str, tuple[object, Path]]:
    """image id -> (raw scene graph, file); an image id in two files is ambiguous and rejected."""
    scenes: dict[str, tuple[object, Path]] = {}
    for path in paths:
        try:
            with open(path, encoding="utf-8") as handle:
                content = json.load(handle)
        except json.JSONDecodeError as exc:
            raise InputError(f"bad JSON ({exc.msg} at column {exc.colno})", source=path, line=exc.lineno) from exc
        except UnicodeDecodeError as exc:
            raise InputError(f"not valid UTF-8 text ({exc.reason})", source=path) from exc
        if not isinstance(content, Mapping):
            raise InputError("expected a JSON object mapping image ids to scene graphs", source=path, line=1)
        for image_id, scene in content.items():
            if image_id in scenes:
                raise InputError(f"image {image_id} is also in {scenes[image_id][1]}", source=path, field=image_id)
            scenes[image_id] = (scene, path)
    return scenes


def _records(graph_paths: list[Path], questions_path: Path, limit: int | None,
             on_bad_row: OnBadRow | None) -> Iterator[Record]:
    scenes = _load_scene_graphs(graph_paths)
    rows = csv_rows(questions_path)
    header_line, header = next(rows, (1, []))
    positions = header_positions(header, REQUIRED_COLUMNS, source=questions_path, line=header_line,
                                 allow_extra=True)
    split_column = next((name for name in SPLIT_COLUMNS if name in positions), None)
    image_splits = None if split_column else _gretriever_image_splits(questions_path, positions["image_id"])
    emitted_images: set[str] = set()
    bad_images: set[str] = set()
    emitted = 0
    for row_index, (line, fields) in enumerate(rows):
        if limit is not None and emitted >= limit:
            return
        try:
            image_id, question = _question(row_index, fields, positions, len(header), split_column,
                                           image_splits, questions_path, line)
            if image_id in bad_images:
                raise InputError(f"image {image_id} has a bad scene graph", source=questions_path, line=line)
            if image_id not in scenes:
                raise InputError(f"image {image_id} is not in the scene graphs", source=questions_path,
                                 line=line, field="image_id")
        except InputError as error:
            reject(error, on_bad_row)
            continue
        if image_id not in emitted_images:
            scene, scene_path = scenes[image_id]
            try:
                graph = graph_record(image_id, scene, scene_path)
            except InputError as error:
                bad_images.add(image_id)
                reject(error, on_bad_row)
                reject(InputError(f"image {image_id} has a bad scene graph", source=questions_path, line=line),
                       on_bad_row)
                continue
            emitted_images.add(image_id)
            yield graph
        emitted += 1
        yield question


def _question(row_index: int, fields: list[str], positions: dict[str, int], width: int,
              split_column: str | None, image_splits: dict[str, str] | None, path: Path,
              line: int) -> tuple[str, QuestionRecord]:
    if len(fields) != width:
        raise InputError(f"expected {width} comma-separated fields, found {len(fields)}", source=path, line=line)
    image_id = fields[positions["image_id"]].strip()
    question_text = fields[positions["question"]]
    answer = fields[positions["answer"]]
    for name, value in (("image_id", image_id), ("question", question_text)):
        if not value.strip():
            raise InputError(f"empty {name}", source=path, line=line, field=name)
    if split_column:
        split = normalise_split(fields[positions[split_column]])
        if split is None:
            raise InputError(f"unknown split {fields[positions[split_column]]!r}", source=path, line=line,
                             field=split_column)
    else:
        split = image_splits[image_id]
    record = QuestionRecord(qid=str(row_index), dataset=DATASET, text=question_text, answers=[answer],
                            split=split, graph_id=f"{DATASET}/{image_id}", source=str(path), line=line)
    return image_id, record


def _gretriever_image_splits(questions_path: Path, image_column: int) -> dict[str, str]:
    """image id -> split, over every row of the questions file (see the module docstring)."""
    unique_ids: dict[str, None] = {}
    header_seen = False
    for _, fields in csv_rows(questions_path):
        if header_seen and image_column < len(fields):
            unique_ids.setdefault(fields[image_column].strip(), None)
        header_seen = True
    import numpy as np

    ordered = list(unique_ids)
    # np.random.seed(42) followed by np.random.permutation is RandomState(42).permutation.
    shuffled = [ordered[position] for position in np.random.RandomState(SPLIT_SEED).permutation(len(ordered))]
    return dict(zip(shuffled, paper_split(len(shuffled), seed=SPLIT_SEED)))
