# syntax=docker/dockerfile:1
#
# The scrapejobs images, one Dockerfile for every service. The build context is the repository
# root and SERVICE names the service:
#
#   docker build --build-arg SERVICE=dispatcher -t scrapejobs-dispatcher .
#   docker build --build-arg SERVICE=worker -t scrapejobs-worker .
#   docker build --build-arg SERVICE=worker --target renderer -t scrapejobs-renderer .
#
# OCR_LANGUAGES (default "eng") names the OCR language packs installed: --build-arg
# OCR_LANGUAGES="eng deu fra".
#
# Dependencies are installed from uv.lock (exported with hashes, --frozen: the lock is never
# re-resolved), the workspace members (shared + web + the service) are built as wheels and
# installed without dependencies. The runtime stages have no build tools, tests or dev
# dependencies and run as an unprivileged user.

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

# --------------------------------------------------------------------------------------
FROM ${PYTHON_IMAGE} AS builder

ARG SERVICE
ARG UV_VERSION=0.13.9
ARG HATCHLING_VERSION=1.33.0

ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_ROOT_USER_ACTION=ignore

RUN case "${SERVICE}" in dispatcher|worker) ;; \
        *) echo "build with --build-arg SERVICE=dispatcher or SERVICE=worker" >&2; exit 1 ;; esac \
    && pip install --no-cache-dir "uv==${UV_VERSION}" "hatchling==${HATCHLING_VERSION}" \
    && python -m venv /opt/venv

WORKDIR /src

# Workspace metadata only (every member's pyproject.toml is needed for uv to read the
# workspace lock), so this layer is rebuilt only when dependencies change.
COPY pyproject.toml uv.lock ./
COPY shared/pyproject.toml shared/
COPY libs/web/pyproject.toml libs/web/
COPY services/dispatcher/pyproject.toml services/dispatcher/
COPY services/worker/pyproject.toml services/worker/
COPY tools/devstack/pyproject.toml tools/devstack/

# Third-party dependencies of the service, pinned and hash-checked from the lock.
RUN uv export --frozen --no-dev --package scrapejobs-${SERVICE} --no-emit-workspace --quiet \
        -o /tmp/requirements.txt \
    && /opt/venv/bin/pip install --no-cache-dir --require-hashes --no-deps -r /tmp/requirements.txt

# The renderer's environment (the worker only): the same, plus the render extra (Playwright's
# package and driver; never a browser download: the renderer image has Debian's Chromium).
RUN if [ "${SERVICE}" = worker ]; then \
        python -m venv /opt/render-venv \
        && uv export --frozen --no-dev --package scrapejobs-worker --extra render \
            --no-emit-workspace --quiet -o /tmp/render-requirements.txt \
        && /opt/render-venv/bin/pip install --no-cache-dir --require-hashes --no-deps \
            -r /tmp/render-requirements.txt; \
    fi

# The workspace members the service needs, without dependencies.
COPY shared/src shared/src
COPY libs/web/src libs/web/src
COPY services/${SERVICE}/src services/${SERVICE}/src
RUN pip wheel --no-deps --no-build-isolation --wheel-dir /tmp/wheels ./shared ./libs/web ./services/${SERVICE} \
    && /opt/venv/bin/pip install --no-cache-dir --no-deps --no-index /tmp/wheels/*.whl \
    && /opt/venv/bin/pip check \
    && /opt/venv/bin/python -c "import scrapejobs_${SERVICE}.main, scrapejobs_shared" \
    && /opt/venv/bin/pip uninstall --yes pip setuptools \
    && if [ "${SERVICE}" = worker ]; then \
        /opt/render-venv/bin/pip install --no-cache-dir --no-deps --no-index /tmp/wheels/*.whl \
        && /opt/render-venv/bin/pip check \
        && /opt/render-venv/bin/python -c "import scrapejobs_worker.rendering.chromium_renderer" \
        && /opt/render-venv/bin/pip uninstall --yes pip setuptools; \
    fi

# --------------------------------------------------------------------------------------
# The renderer (the render lane's service, SERVICE=worker --target renderer): the worker with
# Debian's Chromium in its old headless shell (about half the CPU per page of the full
# browser), which Playwright drives (SCRAPEJOBS_RENDER_BROWSER_PATH).
FROM ${PYTHON_IMAGE} AS renderer

LABEL org.opencontainers.image.title="scrapejobs-renderer" \
      org.opencontainers.image.description="scrapejobs renderer: the render lane's push endpoint, which renders pages in headless Chromium"

ARG OCR_LANGUAGES="eng"

RUN apt-get update \
    && apt-get install --yes --no-install-recommends chromium-headless-shell fonts-liberation \
        $(for lang in ${OCR_LANGUAGES}; do printf 'tesseract-ocr-%s ' "${lang}"; done) \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 scrapejobs \
    && useradd --system --uid 10001 --gid scrapejobs --no-create-home \
        --home-dir /nonexistent --shell /usr/sbin/nologin scrapejobs

COPY --from=builder /opt/render-venv /opt/render-venv

ENV PATH="/opt/render-venv/bin:${PATH}" \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PORT=8080 \
    SCRAPEJOBS_RENDER_BROWSER_PATH=/usr/bin/chromium-headless-shell \
    HOME=/tmp \
    APP_FACTORY=scrapejobs_worker.main:app_from_env

WORKDIR /tmp
USER 10001:10001
EXPOSE 8080

CMD ["sh", "-c", "exec python -m uvicorn --factory \"${APP_FACTORY}\" --host 0.0.0.0 --port \"${PORT:-8080}\" --no-access-log --proxy-headers --forwarded-allow-ips '*' --timeout-graceful-shutdown 8"]

# --------------------------------------------------------------------------------------
# The service (the default target: last).
FROM ${PYTHON_IMAGE} AS runtime

ARG SERVICE
# OCR's language packs (Debian's tesseract-ocr-<lang>; the tesserocr wheel carries the engine),
# space-separated Tesseract names: eng, deu, fra, chi_sim...
ARG OCR_LANGUAGES="eng"

LABEL org.opencontainers.image.title="scrapejobs-${SERVICE}" \
      org.opencontainers.image.description="scrapejobs ${SERVICE}: the dispatcher is the REST API, the worker the Pub/Sub push endpoint that fetches and extracts pages"

RUN apt-get update \
    && apt-get install --yes --no-install-recommends \
        $(for lang in ${OCR_LANGUAGES}; do printf 'tesseract-ocr-%s ' "${lang}"; done) \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 scrapejobs \
    && useradd --system --uid 10001 --gid scrapejobs --no-create-home \
        --home-dir /nonexistent --shell /usr/sbin/nologin scrapejobs

# Owned by root and read-only for the service user.
COPY --from=builder /opt/venv /opt/venv

ENV PATH="/opt/venv/bin:${PATH}" \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PORT=8080 \
    APP_FACTORY=scrapejobs_${SERVICE}.main:app_from_env

WORKDIR /tmp
USER 10001:10001
EXPOSE 8080

# Cloud Run sends the port in $PORT; `exec` makes uvicorn PID 1 so it receives SIGTERM and
# drains in-flight requests (Cloud Run allows 10 s). uvicorn access logs are off: Cloud Run
# already records every request in its request log and the app logs structured JSON. Cloud
# Run ignores HEALTHCHECK; the startup and liveness probes on /healthz are configured in
# terraform/cloud_run.tf. `python -m uvicorn`, not the `uvicorn` script: multiprocessing runs a
# main script again in each process it starts (the worker's extraction processes: uvicorn's and
# click's modules, ~3 MB each), a main module named `uvicorn.__main__` it does not.
CMD ["sh", "-c", "exec python -m uvicorn --factory \"${APP_FACTORY}\" --host 0.0.0.0 --port \"${PORT:-8080}\" --no-access-log --proxy-headers --forwarded-allow-ips '*' --timeout-graceful-shutdown 8"]
