# Two commands on a fresh machine: `make run` and `make test`.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install run test test-loaded lint bench soak clean constraints

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(STAMP): $(BIN)/python pyproject.toml constraints.txt
	$(BIN)/pip install --quiet -c constraints.txt -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/dealer serve $(ARGS)

# Test files run in parallel, one worker per core (pytest-xdist); a file stays on one worker, so its module
# fixtures (servers, browsers, compiled C) are made once. Files go out in collection order, which
# tests/conftest.py starts with the longest ones (xdist's own order, most tests first, sends the files of a few
# long tests last). `make test XDIST=` runs the suite in one process.
XDIST ?= -n auto --dist loadfile --no-loadscope-reorder

test: $(STAMP)
	$(BIN)/python -m pytest -q -m "not slow" $(XDIST) $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy dealer drivers firmware_protocol tests bench
	$(BIN)/lint-imports --no-cache

bench: $(STAMP)
	$(BIN)/python -m bench $(BENCH_ARGS)

# the suite with every core kept busy by another process (a CI-like loaded run: waits are on progress)
test-loaded: $(STAMP)
	$(BIN)/python tests/run_loaded.py $(XDIST) $(PYTEST_ARGS)

soak: $(STAMP) test-loaded
	$(BIN)/python -m pytest -q -m slow --timeout=3600 $(PYTEST_ARGS)

constraints: $(STAMP)
	(echo '# Pinned versions a fresh machine installs (pip install -c constraints.txt). Regenerate with: make constraints'; \
	 $(BIN)/pip freeze --exclude-editable) > constraints.txt

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .mypy_cache .ruff_cache .hypothesis bench/results
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
