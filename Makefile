# The two commands of the README: `make run` and `make test`. Each sets itself up.
PYTHON ?= python3
VENV ?= .venv
CORES ?= $(shell nproc 2>/dev/null || echo 2)
# The study's directory: its results/ and logs/ go below it (default: this checkout).
STUDY ?= .
# The study's config file, merged into config/config.yaml and checked before anything runs;
# without it, <STUDY>/config.yaml when the study has one, else the default config alone.
CONFIG ?= $(shell test -f "$(STUDY)/config.yaml" && echo "$(STUDY)/config.yaml")
# Extra arguments for snakemake, e.g. `make run SNAKEMAKE_ARGS="--forcerun report"`.
SNAKEMAKE_ARGS ?=
# Seconds `make run` waits for a busy machine to become quiet before measuring (0: warn only).
WAIT_QUIET ?= 0
# Extra arguments for pytest, e.g. `make test PYTEST_ARGS="-m 'not slow'"`.
PYTEST_ARGS ?=

BIN := $(VENV)/bin
# A run on a cluster (a profile or executor in SNAKEMAKE_ARGS): check-config skips the checks
# against this machine that a local run makes.
# A dry run (-n in SNAKEMAKE_ARGS) writes no report, so none is announced.
DRY_RUN := $(filter -n --dry-run --dryrun -np -pn,$(SNAKEMAKE_ARGS))
CLUSTER_RUN := $(findstring --profile,$(SNAKEMAKE_ARGS))$(findstring --executor,$(SNAKEMAKE_ARGS))
STAMP := $(VENV)/.dlperf-installed

.PHONY: setup run test lint clean

# The workflow's own environment: dlperf (editable), Snakemake and the test tools.
# Framework environments are built by the workflow itself (workflow/rules/envs.smk).
setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[workflow,test]'
	# Extra-P declares numpy~=1.18 but runs on NumPy 2; its real needs are in pyproject.
	$(BIN)/python -m pip install --quiet --no-deps 'extrap==4.2.5'
	touch $@

run: setup
	$(if $(CONFIG),$(BIN)/dlperf check-config "$(CONFIG)" --defaults config/config.yaml \
		--study "$(STUDY)" $(if $(CLUSTER_RUN),--cluster))
	$(if $(DRY_RUN)$(CLUSTER_RUN),,$(BIN)/dlperf preflight --wait-quiet $(WAIT_QUIET))
	mkdir -p "$(STUDY)"
	$(BIN)/snakemake --snakefile "$(CURDIR)/Snakefile" --directory "$(STUDY)" --cores $(CORES) \
		$(if $(CONFIG),--configfile="$$(realpath "$(CONFIG)")") $(SNAKEMAKE_ARGS)
	@report="$(STUDY)/results/report/index.html"; \
	if [ -z "$(DRY_RUN)" ] && [ -f "$$report" ]; then echo "Report: $$(realpath "$$report")"; fi
	@# Last: exit status 1 (make's 2), saying so, when every benchmark run failed (report written).
	@$(if $(DRY_RUN),true,$(BIN)/python -m dlperf.report.failure_reasons \
		"$(STUDY)/results/failures.csv" "$(STUDY)/results/timings.csv")

test: setup
	$(BIN)/python -m pytest $(PYTEST_ARGS)

lint: setup
	$(BIN)/snakemake --lint
	$(BIN)/snakefmt --check .
	$(BIN)/ruff check src tests

clean:
	rm -rf results logs .snakemake
