# The two commands of the README. Everything lands in .venv/ and workspace/ inside this folder.
export WORKBENCH_HOME ?= $(CURDIR)/workspace
export HF_HUB_OFFLINE ?= 1
PROBES_DIR := $(WORKBENCH_HOME)/probes

.PHONY: explore test setup

setup:
	bash scripts/setup.sh

explore: setup
	.venv/bin/workbench data setup
	.venv/bin/workbench probes build --probe all --out $(PROBES_DIR)

test: setup
	.venv/bin/python -m pytest
