# `make demo` and `make test` work on a machine with only python3 and make: each creates .venv
# if it is missing and installs the project (editable) with the extras it needs.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: demo test test-all venv clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test]"
	rm -f $(VENV)/.installed-* && touch $@

venv: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/s3vm-bench demo

# Default run: everything but the `slow` and `network` markers (see pyproject.toml).
test: $(STAMP)
	$(PY) -m pytest

test-all: $(STAMP)
	$(PY) -m pytest -m "not network"

clean:
	rm -rf $(VENV) .pytest_cache build *.egg-info
