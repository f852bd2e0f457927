"""Few-shot tuning of the walk encoder, offline: what `gqa train` does with N questions of a graph's own
(`train.fewshot.fewshot_walk_encoder`), measured over `train.general_reader collect` files instead of through the
CLI, so that its settings can be chosen on read graphs in minutes.

For each collect file: its questions in a seeded order, the first N tune the encoder's adapters further (from
ENCODER, a saved walk encoder with low-rank adapters), the rest are measured. The measure is the share of them
whose walk of best reader score plus *weight* times the encoder's similarity reaches a gold answer
(`train.walk_encoder.choice_hit`), for the encoder as saved ("general") and tuned ("e<epochs>@<weight>", or
"L<layers>e<epochs>@<weight>" where only the adapters of the last <layers> layers are tuned), with the seconds the
tuning took ("seconds …"). With `--final soup`, also the mean of the cross-validation's fold encoders, each tuned on
the N questions less one fold ("soup…": what `gqa train` keeps instead of tuning once more on all N where
`EncoderAdaptation.final` is "soup"; its seconds are the folds').

    python bench/fewshot_offline.py ENCODER DATA/*.npz [--questions 25] [--epochs 8] [--layers 2] [--weights 4]
        [--final tuned,soup] [--seed 0] [--out bench/results/walk_encoder/fewshot_offline.json]
"""

from __future__ import annotations

import argparse
import copy
import itertools
import sys
import time
from pathlib import Path

import numpy as np
from _common import REPO, RESULTS, command, machine, write_json

sys.path.insert(0, str(REPO))


def main() -> None:
    from sentence_transformers import SentenceTransformer

    from gretriever_neo4j.embedding.embedder import resolve_model_location
    from gretriever_neo4j.reader.walk_encoder import read_saved, tuned_state, with_lora
    from train.fewshot import EncoderAdaptation
    from train.walk_encoder import EncoderConfig, choice_hit, fine_tune, similarities, walk_questions
    from train.walk_encoder_soup import soup

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("encoder", type=Path, help="a saved walk encoder folder (low-rank adapters)")
    parser.add_argument("data", type=Path, nargs="+", help="train.general_reader collect files, one per graph")
    parser.add_argument("--questions", type=int, default=25, help="the graph's own questions it is tuned on")
    parser.add_argument("--epochs", default=str(EncoderAdaptation.epochs), help="comma-separated")
    parser.add_argument("--layers", default=str(EncoderAdaptation.layers or "all"),
                        help="comma-separated: the last layers whose adapters are tuned, or 'all'")
    parser.add_argument("--weights", default="4", help="the similarity's weights, comma-separated")
    parser.add_argument("--final", default="tuned", help="comma-separated: 'tuned' (once more on all N), 'soup' "
                        "(the mean of the fold encoders)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=RESULTS / "walk_encoder" / "fewshot_offline.json")
    args = parser.parse_args()
    epochs = [int(e) for e in args.epochs.split(",")]
    weights = [float(w) for w in args.weights.split(",")]
    layer_choices = [None if x == "all" else int(x) for x in args.layers.split(",")]
    finals = args.final.split(",")

    config, state = read_saved(args.encoder)
    base = SentenceTransformer(resolve_model_location(config.base), device="cpu")
    general = with_lora(copy.deepcopy(base), config, state).eval()
    adaptation = EncoderAdaptation()
    per_graph = {}
    for path in args.data:
        questions = walk_questions([path], config.candidates)
        order = np.random.default_rng(args.seed).permutation(len(questions))
        train = [questions[i] for i in order[:args.questions]]
        test = [questions[i] for i in order[args.questions:]]
        sims = similarities(general, test)
        result = {"held_out_questions": len(test), **{f"general@{w:g}": choice_hit(test, sims, w) for w in weights}}
        for layers, e in itertools.product(layer_choices, epochs):
            name = f"e{e}" if layers is None else f"L{layers}e{e}"
            tuning = EncoderConfig(epochs=e, learning_rate=adaptation.learning_rate, batch=adaptation.batch,
                                   seed=adaptation.seed)

            def tuned(on, lower_states=None, tuning=tuning, layers=layers):
                return fine_tune(with_lora(copy.deepcopy(base), config, state), on, tuning, log=False, top=layers,
                                 lower_states=lower_states)

            if "tuned" in finals:
                started = time.perf_counter()
                model = tuned(train)
                result[f"seconds {name}"] = round(time.perf_counter() - started, 1)
                sims = similarities(model, test)
                result |= {f"{name}@{w:g}": choice_hit(test, sims, w) for w in weights}
            if "soup" in finals:
                started = time.perf_counter()
                folds = adaptation.folds
                shared = {}  # the frozen lower layers' states, read once for the folds as `gqa train` reads them
                parts = [(config, tuned_state(tuned([q for i, q in enumerate(train) if i % folds != fold], shared),
                                              config)) for fold in range(folds)]
                mean_config, mean_state = soup(parts)
                model = with_lora(copy.deepcopy(base), mean_config, mean_state).eval()
                result[f"seconds soup{name}"] = round(time.perf_counter() - started, 1)
                sims = similarities(model, test)
                result |= {f"soup{name}@{w:g}": choice_hit(test, sims, w) for w in weights}
        per_graph[path.stem] = result
        print(path.stem, {k: round(v, 3) for k, v in result.items()}, flush=True)
    keys = [k for k in next(iter(per_graph.values())) if k != "held_out_questions"]
    mean = {k: round(float(np.mean([r[k] for r in per_graph.values()])), 4) for k in keys}
    print("mean", mean)
    write_json(args.out, {"machine": machine(), "command": command(), "encoder": str(args.encoder),
                          "questions": args.questions, "seed": args.seed, "per_graph": per_graph, "mean": mean})


if __name__ == "__main__":
    main()
