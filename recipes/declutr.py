"""DeCLUTR: a sentence encoder trained without labels on spans sampled from long documents.

Giorgi et al., "DeCLUTR: Deep Contrastive Learning for Unsupervised Textual Representations", ACL 2021
(../shared/papers/declutr_acl2021.txt). The paper's experiment, written out against the package's Python API: read
documents, sample A anchor spans per document and P positives per anchor, continue training a pretrained encoder
with NT-Xent between each anchor and the mean of its positives plus MLM on the masked anchors (one forward pass),
and score STS before and after. The paper continues DistilRoBERTa and RoBERTa-base on 497,868 OpenWebText
documents; here the base is all-MiniLM-L6-v2 and the documents are the shared Wikipedia articles.

    python recipes/declutr.py --max-steps 150 --batch-size 4 --output runs/recipe-declutr

`st-contrastive declutr` runs the same method with checked settings, resume and a model card.
"""

import argparse
import json
import logging
from pathlib import Path

from sentence_transformers import SentenceTransformer

from st_contrastive.data import DeCLUTRDataCollator, SpanSampler, load_corpus, longest_span, prepare_declutr_dataset
from st_contrastive.default_model import default_model
from st_contrastive.evaluation import evaluate_model
from st_contrastive.losses import DeCLUTRLoss
from st_contrastive.reporting import format_comparison
from st_contrastive.training import TrainSettings, train

# The paper's settings, by section of declutr_acl2021.txt.
NUM_ANCHORS = 2  # §4.1: A = 2 anchor spans per document
NUM_POSITIVES = 2  # §4.1: P = 2 positive spans per anchor
MIN_SPAN_LENGTH, MAX_SPAN_LENGTH = 32, 512  # §3.2: ℓmin and ℓmax, in tokens
MLM_PROBABILITY = 0.15  # §3.3: MLM on each anchor span as in BERT, whose masking rate this is
TEMPERATURE = 0.05  # §4.1: τ = 5 × 10⁻²
BATCH_SIZE = 16  # §4.1: minibatches of 16 documents
LEARNING_RATE, WEIGHT_DECAY = 5e-5, 0.1  # §4.1: AdamW
WARMUP_RATIO = 0.1  # §4.1: slanted triangular schedule with a cut fraction of 0.1 (linear up, then linear down)
MAX_GRAD_NORM = 1.0  # §4.1: gradients scaled to a norm of 1.0
EPOCHS = 1  # §4.1: one to three epochs; the arXiv version (declutr_arxiv.md) trains one

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--model", default=None, help="base model, a folder or Hub id (default all-MiniLM-L6-v2)")
parser.add_argument("--dataset", default="wiki", help="documents: wiki, books (the shared corpora) or a file")
parser.add_argument("--max-rows", type=int, default=None, help="read only the first N documents")
parser.add_argument("--max-span-length", type=int, default=MAX_SPAN_LENGTH, help="longest span in tokens")
parser.add_argument("--max-steps", type=int, default=-1, help="stop after N steps (default: one epoch)")
parser.add_argument("--batch-size", type=int, default=BATCH_SIZE, help="documents per batch")
parser.add_argument("--eval-tasks", nargs="+", default=["sts"], help="scored before and after (sts: STS-B, SICK-R)")
parser.add_argument("--eval-max-rows", type=int, default=None, help="score only the first N pairs of each task")
parser.add_argument("--output", default="runs/recipe-declutr", help="folder of the checkpoint and results.json")
args = parser.parse_args()
logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
output = Path(args.output)

model = SentenceTransformer(args.model or default_model())
# ℓmax, the longest span, must leave room for the special tokens the model adds ([CLS] and [SEP]).
max_span_length = min(args.max_span_length, longest_span(model)[0])
sampler = SpanSampler(
    num_anchors=NUM_ANCHORS,
    num_positives=NUM_POSITIVES,
    max_length=max_span_length,
    min_length=min(MIN_SPAN_LENGTH, max_span_length),
)
# The paper kept only documents of at least 2048 tokens (2·A·ℓmax); shorter ones are skipped, with a count.
documents = load_corpus(args.dataset, limit=args.max_rows)
train_dataset = prepare_declutr_dataset(documents, model.tokenizer, sampler)
print(f"{len(train_dataset)} of {len(documents)} documents are long enough for spans of up to {max_span_length} tokens")

# L = L_contrastive + L_MLM (§3.3). A base without an MLM head (all-MiniLM-L6-v2) gets a new one, tied to its
# input embeddings; a log line says so.
loss = DeCLUTRLoss(model, temperature=TEMPERATURE)
collator = DeCLUTRDataCollator(model.tokenizer, sampler, mlm_probability=MLM_PROBABILITY)  # new spans every batch
settings = TrainSettings(
    output_dir=str(output / "checkpoints"),
    batch_size=args.batch_size,
    epochs=EPOCHS,
    max_steps=args.max_steps,
    learning_rate=LEARNING_RATE,
    weight_decay=WEIGHT_DECAY,
    warmup_ratio=WARMUP_RATIO,
    max_grad_norm=MAX_GRAD_NORM,
)

before = evaluate_model(model, args.eval_tasks, max_rows=args.eval_max_rows)
run = train(model, loss, train_dataset, settings, data_collator=collator)
model.save(str(output))  # Transformer + Pooling: loads with SentenceTransformer(path), without this package
after = evaluate_model(model, args.eval_tasks, max_rows=args.eval_max_rows)

print(format_comparison(before, after))
results = {
    "paper": "DeCLUTR (Giorgi et al., ACL 2021)",
    "model": args.model or "all-MiniLM-L6-v2",
    "dataset": args.dataset,
    "documents_used": len(train_dataset),
    "documents_read": len(documents),
    "max_span_length": max_span_length,
    "train": run.summary(),
    "before": before,
    "after": after,
}
(output / "results.json").write_text(json.dumps(results, indent=2, default=str))
print(f"Saved {output} ({run.steps} steps in {run.seconds / 60:.1f} min); results in {output / 'results.json'}")
