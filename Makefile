# One command to serve, one to test; each sets up what it needs first.
#   make serve   set up, build, serve the site with the live lab on http://127.0.0.1:8000
#   make test    set up (venv, npm ci, headless Chromium), build, run every test
#   make bench   print speed and memory figures (and the lab on a throttled network)
# Setup is idempotent: stamps in .stamps/ skip work already done for the same
# requirements / lock files.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMPS := .stamps
PORT ?= 8000
PYTEST_ARGS ?=

export NO_MKDOCS_2_WARNING := 1
export PYTHONDONTWRITEBYTECODE := 1

.PHONY: setup serve dev site test test-fast bench browser clean check-scenarios validation

setup: $(STAMPS)/venv $(STAMPS)/node

$(STAMPS)/venv: requirements.txt constraints.txt pyproject.toml
	@mkdir -p $(STAMPS)
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt -c constraints.txt
	@touch $@

$(STAMPS)/node: package.json package-lock.json
	@mkdir -p $(STAMPS)
	npm ci --no-audit --no-fund --loglevel=error
	@touch $@

browser: $(STAMPS)/venv
	@$(PY) -m labtools.browser ensure

site: setup
	$(VENV)/bin/mkdocs build --strict --quiet

serve: site
	$(PY) -m labtools.serve --root site --port $(PORT)

# Live-reloading authoring server (rebuilds on edits).
dev: setup
	$(VENV)/bin/mkdocs serve -a 127.0.0.1:$(PORT)

test: setup browser
	$(PY) -m pytest $(PYTEST_ARGS)

# Everything but the browser.
test-fast: setup
	$(PY) -m pytest -m "not browser" $(PYTEST_ARGS)

# The peer calculator the model is timed against lives in its own venv.
$(STAMPS)/peer:
	@mkdir -p $(STAMPS)
	@test -x .venv-peer/bin/python || $(PYTHON) -m venv .venv-peer
	.venv-peer/bin/pip install --quiet --disable-pip-version-check llm-analysis==0.2.2
	@touch $@

bench: site browser $(STAMPS)/peer
	$(PY) bench/run_all.py

# Validate scenario files: `make check-scenarios` (all) or FILES="scenarios/x.yaml".
check-scenarios: $(STAMPS)/venv
	$(PY) -m labsite.check_scenarios $(FILES)

# The validation table (every published figure in content/validation/ and scenarios/, the same
# rows as the site's "Model vs published runs" page, each with its tolerance), then the
# calibration fits reproduced. `make validation BREAKDOWN=fms_fsdp,automodel_h100` prints where
# the step time of those groups' runs goes instead.
validation: $(STAMPS)/venv
ifdef BREAKDOWN
	$(PY) -m labtools.validation_report --breakdown $(BREAKDOWN)
else
	$(PY) -m labtools.validation_report
	$(PY) -m labtools.fit_calibration
	$(PY) -m labtools.fit_modern_stack
endif

clean:
	rm -rf site $(STAMPS) .pytest_cache .cache
