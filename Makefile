# `make demo` and `make test` work on a machine with only python3 and make: each creates .venv
# if it is missing and installs the project (editable) with the extras it needs.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: demo test test-all venv clean asv asv-smoke

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test]"
	rm -f $(VENV)/.installed-* && touch $@

venv: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/s3vm-bench demo

# Default run: everything but the `slow` and `network` markers (see pyproject.toml), on one
# pytest-xdist worker per core (`.venv/bin/python -m pytest` runs the same tests in one process),
# each worker with one BLAS thread: the workers already take every core, and BLAS threads that
# wait for a busy core slow the linear algebra down by an order of magnitude.
ONE_THREAD := OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
test: $(STAMP)
	$(ONE_THREAD) $(PY) -m pytest -n auto

test-all: $(STAMP)
	$(ONE_THREAD) $(PY) -m pytest -n auto -m "not network"

# asv (README "Benchmarks (asv)"): data through the pooch mirror ../shared/data, absolute because
# asv runs the benchmarks from its own folders; both variables can be overridden.
ASV        := $(VENV)/bin/asv
ASV_DATA   := S3VM_DATA_MIRROR=$(or $(S3VM_DATA_MIRROR),$(abspath ../shared/data)) \
              S3VM_DATA_DIR=$(or $(S3VM_DATA_DIR),$(abspath .asv/data))

# The full suite on the current commit, in asv's own virtualenv (project built as a wheel), then
# the HTML in .asv/html (`$(ASV) preview` serves it).
asv: $(STAMP)
	$(ASV) machine --yes >/dev/null
	$(ASV_DATA) $(ASV) run --show-stderr HEAD^!
	$(ASV) publish

# CI: the suite imports and every benchmark runs once on the tiny profile (two moons, three
# solvers) in the existing .venv; a failing benchmark fails the target.
asv-smoke: $(STAMP)
	$(ASV) machine --yes >/dev/null
	$(ASV) check -E existing
	S3VM_ASV_PROFILE=tiny $(ASV_DATA) $(ASV) run -E existing --quick --show-stderr \
		--set-commit-hash $$(git rev-parse HEAD)

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
