# scrapejobs developer commands. `make dev` starts the whole local stack; `make test` runs every test.
SHELL := /bin/bash
export UV_PYTHON_DOWNLOADS := never
export UV_PYTHON_PREFERENCE := only-system
UV_VERSION := 0.13.9
UV := $(shell command -v uv 2>/dev/null || echo python3 -m uv)

.PHONY: install dev down demo test test-fast lint format bench bench-quality scale clean

install: ## Install uv (if missing) and every dependency from the lock file
	@$(UV) --version >/dev/null 2>&1 || python3 -m pip install -q "uv==$(UV_VERSION)" \
		|| python3 -m pip install -q --user --break-system-packages "uv==$(UV_VERSION)"
	@$(UV) sync --frozen

dev: install ## Start emulators + topics/subscriptions + dispatcher (:8080) + worker (:8081)
	$(UV) run devstack up

down: ## Stop a stack that `make dev` left running
	$(UV) run devstack down

demo: ## Serve the demo shop, submit a job to the running stack, print the results
	$(UV) run devstack demo

test: install ## Every test, emulators included (started on free ports by the suite)
	$(UV) run pytest

test-fast: install ## Unit tests only (no emulators)
	$(UV) run pytest tests/unit

lint: install ## ruff + mypy
	$(UV) run ruff check .
	$(UV) run ruff format --check .
	$(UV) run mypy shared/src libs/web/src libs/client/src services/dispatcher/src services/worker/src tools/devstack/src tools/scale/src bench

format: install
	$(UV) run ruff check --fix .
	$(UV) run ruff format .

bench: install ## Full-stack benchmark against a bare httpx + parsel loop and Celery + Redis
	@$(UV) sync --frozen --group bench
	$(UV) run --frozen --group bench python bench/run_bench.py

bench-quality: install ## markdown's main content on the public benchmarks beside trafilatura (SCRAPINGHUB=dir WCXB=dir; none: the committed sample)
	@$(UV) sync --frozen --group quality
	$(UV) run --frozen --group quality python bench/content_quality.py $(if $(SCRAPINGHUB),--scrapinghub $(SCRAPINGHUB)) $(if $(WCXB),--wcxb $(WCXB)/dev) --json bench/results/quality.json

scale: install ## The services as hundreds of instances against Google's documented limits, simulated (docs/scale.md)
	$(UV) run scale

clean:
	rm -rf .devstack .pytest_cache .mypy_cache .ruff_cache
