# ClassMap Studio. `make run` and `make test` work on a fresh machine: they create .venv,
# install the package with its test extras, then run.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test test-fast docs screenshots scripts-smoke demo sysdeps clean package package-test network

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test,docs,train]'
	touch $(STAMP)

# Qt's xcb runtime, Xvfb and Fashion-MNIST from Debian (needs root; skipped when present).
sysdeps:
	@bash .ci/sysdeps

# the app on the project saved last (the built-in demo the first time; `classmap-gui --demo` for the demo)
run: sysdeps $(STAMP)
	$(VENV)/bin/classmap-gui

demo: $(STAMP)
	$(VENV)/bin/classmap train --data digits --features kmeans --bank ova-liblinear --out out/digits-model
	$(VENV)/bin/classmap eval out/digits-model --data digits

test: sysdeps $(STAMP)
	$(VENV)/bin/ruff check .
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q
	$(MAKE) docs SPHINXOPTS="-W --keep-going"

# the manual (docs/*.md + the API reference from the docstrings) -> build/docs/index.html; make test builds it
# with warnings as errors. The Sphinx configuration is .sphinx/conf.py (docs/ holds the pages only).
docs: $(STAMP)
	$(PY) -m sphinx -b html -q $(SPHINXOPTS) -c .sphinx docs build/docs

# re-make the screenshots that need no model (scripts/README.md lists the others; no display needed)
screenshots: $(STAMP)
	QT_QPA_PLATFORM=offscreen PYTHONPATH=. $(PY) scripts/screenshots/make.py journey dataset train run explore explore-kmeans
	QT_QPA_PLATFORM=offscreen PYTHONPATH=. $(PY) scripts/screenshots/make_runs.py

# every script of scripts/ on tiny options (tests/scripts/; make test runs them too)
scripts-smoke: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q tests/scripts

test-fast: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q -m "not slow"

# The hand reader's network, trained from scratch (the shipped one: 7 min on one GPU with 14 rendering processes,
# `--minutes 7 --batch 256 --background 16 --workers 14`; the CPU default here takes 1-2 hours on 2 cores; rerun to
# resume from its checkpoint), then shipped as package data beside the record that made it.
network: $(STAMP)
	$(VENV)/bin/classmap train-network --out out/network
	cp out/network/network.onnx classmap_gui/resources/networks/hand.onnx
	cp out/network/training.json classmap_gui/resources/networks/hand.json

# Installer: PyInstaller one-folder bundle -> dist/classmap-studio_<version>_amd64.deb and a .tar.gz
# (packaging/build.sh); package-test installs the .deb, runs it from the PATH and uninstalls (root/sudo).
package: $(STAMP)
	PY=$(abspath $(PY)) bash packaging/build.sh

package-test: package
	bash packaging/package_test.sh

clean:
	rm -rf $(VENV) build dist *.egg-info out
