# Testbed Studio — every target sets up what it needs first (Debian packages as root,
# the project-local .venv); a second run reinstalls nothing.  See .ci/setup.sh.
VENV   := .venv
PY     := $(VENV)/bin/python
SETUP  := bash .ci/setup.sh
# two workers (CI has two cores); one file's tests stay on one worker (they share its servers)
PYTEST ?= -q -n 2 --dist loadfile --no-loadscope-reorder
FUZZ_MINUTES ?= 5

.PHONY: help run test bench fuzz setup bundle clean

help:
	@echo "make run     set up, then start Testbed Studio (needs a display: try 'xvfb-run make run')"
	@echo "make test    set up, then run the test suite"
	@echo "make bench   set up, then run the benchmark"
	@echo "make fuzz    set up, then fuzz load/validate/methodology/run plan/Ansible/save ($(FUZZ_MINUTES) min)"
	@echo "make setup   Debian packages (app + tests) and $(VENV) only"
	@echo "make bundle  PyInstaller one-folder build in dist/testbed-studio/"
	@echo "make clean   remove $(VENV), build/, dist/ and caches"

fuzz:
	@$(SETUP) test
	timeout $$(( $(FUZZ_MINUTES) * 60 + 120 )) $(PY) tests/fuzz_pipeline.py --minutes $(FUZZ_MINUTES)

setup:
	@$(SETUP) test

run:
	@$(SETUP) app
	@if [ -z "$$DISPLAY$$WAYLAND_DISPLAY" ] && [ -z "$$QT_QPA_PLATFORM" ]; then \
	    echo "No display (DISPLAY is not set). Testbed Studio is a desktop application:"; \
	    echo "  - on a machine without a screen, run it on a virtual one:  xvfb-run make run"; \
	    echo "  - or render without any window system:  QT_QPA_PLATFORM=offscreen make run"; \
	    echo "  - the command line needs no display:  $(VENV)/bin/testbed-studio --help"; \
	    exit 1; \
	fi
	$(VENV)/bin/testbed-studio $(ARGS)

# the suite starts Python hundreds of times (the CLI, the X scenes, Ansible): each start compiles
# the project's modules again where bytecode is not written, so the suite writes it
test:
	@$(SETUP) test
	env -u PYTHONDONTWRITEBYTECODE $(PY) -m pytest $(PYTEST)

bench:
	@$(SETUP) test
	env -u PYTHONDONTWRITEBYTECODE $(PY) -m bench $(ARGS)

bundle:
	@$(SETUP) bundle
	$(VENV)/bin/pyinstaller --noconfirm --clean --log-level WARN \
	    --distpath dist --workpath build/pyinstaller packaging/testbed-studio.spec
	@echo "bundle: dist/testbed-studio/testbed-studio  (smoke test: $(PY) -m pytest -m bundle)"

clean:
	rm -rf $(VENV) build dist .pytest_cache .hypothesis *.egg-info
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
