# ClassMap Studio. `make run` and `make test` work on a fresh machine: they create .venv,
# install the package with its test extras, then run.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test test-fast demo sysdeps clean package package-test

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
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

test-fast: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q -m "not slow"

# Installer: PyInstaller one-folder bundle -> dist/classmap-studio_<version>_amd64.deb and a .tar.gz
# (packaging/build.sh); package-test installs the .deb, runs it from the PATH and uninstalls (root/sudo).
package: $(STAMP)
	PY=$(abspath $(PY)) bash packaging/build.sh

package-test: package
	bash packaging/package_test.sh

clean:
	rm -rf $(VENV) build dist *.egg-info out
