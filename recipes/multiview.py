"""Multi-view structured sentence encoders: two views of a sentence trained to find its neighbours in a story.

Simoulin & Crabbé, "Contrasting distinct structured views to learn sentence embeddings", EACL SRW 2021
(../shared/papers/multiview_structured_views.md). The paper's experiment, written out against the package's Python
API: parse a corpus in reading order, build two encoders over different structures of each sentence (SEQ: bi-GRU,
DEP: attentive child-sum Tree-LSTM over the dependency tree, CONST: binary Tree-LSTM over the binarized constituency
tree), train them so that c(f(s), g(s')) = f(s)ᵀ W g(s') picks out the sentences next to s among the batch, and
evaluate the embedding [f(s); g(s)] on the paper's SentEval tasks. The paper trains on 40M UMBC sentences with a
neural parser; here the corpus is the shared books, parsed with spaCy, and the constituency trees are derived from
the dependency parse (no constituency parser is reachable offline).

    python recipes/multiview.py --views dep,seq --dim 256 --word-dim 128 --max-steps 150 --output runs/recipe-multiview

`st-contrastive parse` and `st-contrastive multiview` run the same method with checked settings and resume.
"""

import argparse
import json
import logging
from pathlib import Path

import torch

from st_contrastive.data import SHARED_CORPORA, ContextBlockBatchSampler, load_sentence_corpus
from st_contrastive.data_dir import data_file
from st_contrastive.evaluation import evaluate_model
from st_contrastive.losses import MultiViewBilinearLoss
from st_contrastive.models import multiview_model
from st_contrastive.parsing import make_parser, parse_corpus
from st_contrastive.reporting import format_results_table
from st_contrastive.training import TrainSettings, train

# The paper's settings, by section of multiview_structured_views.md.
BATCH_SIZE = 400  # A.2: batches of 400 consecutive sentences (§3.1), the others of the batch being the negatives
LEARNING_RATE = 5e-4  # A.2: Adam (no weight decay); Xavier weights, zero biases and no dropout are the modules' own
DIM = 2400  # Table 1: 4800-dimensional embeddings, [f(s); g(s)], so 2400 per view
WORD_DIM = 300  # §3.1: 300-dimensional word vectors
VOCABULARY_SIZE = 50_000  # §3.1: the 50K most frequent words, Xavier-initialised and trained
CONTEXT_SIZE = 1  # §2.1, after Logeswaran and Lee (2018): the sentence before and the one after are positives
EVAL_TASKS = ["mr", "cr", "subj", "mpqa", "trec", "mrpc", "sick-r"]  # §3.2: SentEval, logistic regression on top

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--views", default="dep,seq", help="two of seq, dep, const (seq,seq is QuickThought)")
parser.add_argument("--dataset", default="books", help="documents in reading order: books, wiki or a .jsonl(.gz) file")
parser.add_argument(
    "--max-rows",
    type=int,
    default=300,
    help="parse the first N documents (spaCy: about 21,500 sentences of books for 300)",
)
parser.add_argument("--max-sentences", type=int, default=None, help="train on the first N parsed sentences")
parser.add_argument("--dim", type=int, default=DIM, help="size of each view's sentence embedding")
parser.add_argument("--word-dim", type=int, default=WORD_DIM, help="size of the word embeddings")
parser.add_argument("--max-steps", type=int, default=-1, help="stop after N steps (default: one epoch)")
parser.add_argument("--batch-size", type=int, default=BATCH_SIZE, help="consecutive sentences per batch")
parser.add_argument("--eval-max-rows", type=int, default=None, help="use only N rows of each task")
parser.add_argument("--output", default="runs/recipe-multiview", help="folder of the checkpoint and results.json")
args = parser.parse_args()
logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
output, views = Path(args.output), args.views.split(",")

# Parsing is the slow part: the parses go to runs/parsed (where `st-contrastive multiview` keeps them too), and a
# second run reads them back.
spacy_parser = make_parser("spacy")
parser_name = spacy_parser.name.replace(":", "_")
corpus = data_file(SHARED_CORPORA[args.dataset][0]) if args.dataset in SHARED_CORPORA else Path(args.dataset)
parsed = Path("runs/parsed") / f"{corpus.name.split('.')[0]}-{args.max_rows}docs-{parser_name}.jsonl.gz"
parse_corpus(corpus, parsed, spacy_parser, limit_documents=args.max_rows)
# Each row is a sentence id labelled with its position in the corpus, so the loss knows which sentences are neighbours.
train_dataset, sentences = load_sentence_corpus(parsed, args.max_sentences)

settings = TrainSettings(
    output_dir=str(output / "checkpoints"),
    batch_size=args.batch_size,
    max_steps=args.max_steps,
    learning_rate=LEARNING_RATE,
    warmup_ratio=0.0,
)
torch.manual_seed(settings.seed)  # the Xavier initialisation of the views
model = multiview_model(
    views, sentences, parser="spacy", word_dim=args.word_dim, dim=args.dim, max_words=VOCABULARY_SIZE
)
model[0].add_parses(sentences)  # training rows read their parse by id instead of parsing again
loss = MultiViewBilinearLoss(model, context_size=CONTEXT_SIZE, symmetric=False)  # §2.1 scores c(f(s), g(s')) only
run = train(model, loss, train_dataset, settings, batch_sampler=ContextBlockBatchSampler)
model.save(
    str(output)
)  # loads with SentenceTransformer(path, trust_remote_code=True) where st_contrastive is installed

# Evaluation sentences are parsed as they are encoded; the cache keeps them for the next run.
model[0].cache_parses_in(Path("runs/parsed") / f"evaluation-{parser_name}.jsonl.gz")
model.eval()
after = evaluate_model(model, EVAL_TASKS, max_rows=args.eval_max_rows)

print(format_results_table(after))
derived = sum(s.constituency is None or s.constituency_source == "head-projection" for s in sentences)
results = {
    "paper": "Multi-view structured encoders (Simoulin & Crabbé, EACL SRW 2021)",
    "views": views,
    "parsed_corpus": str(parsed),
    "sentences": len(train_dataset),
    "dim": args.dim,
    "word_dim": args.word_dim,
    "constituency_trees_derived": derived,
    "train": run.summary(),
    "after": after,
}
(output / "results.json").write_text(json.dumps(results, indent=2, default=str))
print(f"Saved {output} ({run.steps} steps in {run.seconds / 60:.1f} min); results in {output / 'results.json'}")
