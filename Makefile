# One task runner: CI calls `make test` unchanged.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: test test-heavy demo lint format typecheck bench clean browser

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[mine,dev,dask]'
	touch $(STAMP)

# the evaluation report's browser test renders it in headless Chromium: installed here
# when missing and apt-get can (as root, or with sudo that asks nothing); else it skips
BROWSERS := chromium chromium-browser google-chrome google-chrome-stable
browser:
	@for b in $(BROWSERS); do command -v $$b >/dev/null 2>&1 && exit 0; done; \
	if ! command -v apt-get >/dev/null 2>&1; then \
	  echo "no Chromium and no apt-get: the report's browser test will skip"; exit 0; fi; \
	if [ "$$(id -u)" = 0 ]; then as=; elif sudo -n true 2>/dev/null; then as="sudo -n"; \
	else echo "no Chromium, and no root to install it: the report's browser test will skip"; \
	  exit 0; fi; \
	echo "installing chromium for the report's browser test"; \
	DEBIAN_FRONTEND=noninteractive $$as apt-get install -y -qq chromium >/dev/null 2>&1 || \
	{ $$as apt-get update -qq >/dev/null 2>&1 && \
	  DEBIAN_FRONTEND=noninteractive $$as apt-get install -y -qq chromium >/dev/null 2>&1; } || \
	echo "chromium could not be installed: the report's browser test will skip"

test: $(STAMP) browser
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy
	$(BIN)/python -m pytest -n 2 --dist worksteal -m "not heavy"

# the dominance test at 100 and 300 tasks as well (several more minutes)
test-heavy: $(STAMP) browser
	$(BIN)/python -m pytest -n 2 --dist worksteal

demo: $(STAMP)
	$(BIN)/python -m tracemine.cli._demo

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

format: $(STAMP)
	$(BIN)/ruff format src tests benchmarks
	$(BIN)/ruff check --fix src tests benchmarks

typecheck: $(STAMP)
	$(BIN)/mypy

bench: $(STAMP)
	$(BIN)/python benchmarks/ingest.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache
