# dlperf: benchmark -> aggregate -> fit -> validate -> report.
# The rules stay thin: each names its files and calls one `dlperf` subcommand.
import json
import os
import sys

import dlperf.adaptive.rounds
import dlperf.bench.envinfo
import dlperf.cluster
import dlperf.config
import dlperf.envs
import dlperf.failed_jobs
import dlperf.planning
import dlperf.provenance
import dlperf.remeasure
import dlperf.study_outputs
import dlperf.sweep_checks


# The default configuration lives with the workflow, wherever the study's directory is
# (`snakemake --directory <study>`, `make run STUDY=<study>`).
configfile: os.path.join(workflow.basedir, "config", "config.yaml")


report: "workflow/report/workflow.rst"


envvars:
    "PATH",


# Snakemake builds tens of objects per job: collect garbage less often while it plans.
dlperf.planning.collect_garbage_less_often()


try:
    # A user's `models` or `validation.protocols` replaces the default's (not merged into it).
    config = dlperf.config.with_user_choices(
        config, workflow.config_settings.overwrite_config
    )
    config = dlperf.config.validated(config)
    if config["frameworks"] and dlperf.cluster.is_local_run(workflow):
        MACHINE_PROBLEMS = dlperf.sweep_checks.local_machine_problems(
            config,
            dlperf.bench.envinfo.available_cores(),
            dlperf.sweep_checks.visible_gpus(),
        )
        if MACHINE_PROBLEMS:
            raise dlperf.config.ConfigError("\n".join(MACHINE_PROBLEMS))
    EXTERNAL = config["external_timings"]
    EXTERNAL_FRAMEWORKS = dlperf.study_outputs.external_frameworks(config)
except (dlperf.config.ConfigError, ValueError, FileNotFoundError) as error:
    raise WorkflowError(str(error)) from None

RUNS = dlperf.config.run_configs(config)
# Frameworks we benchmark, and all we model (ours plus those of external timings).
FRAMEWORKS = config["frameworks"]
MODELLED = sorted(set(FRAMEWORKS) | set(EXTERNAL_FRAMEWORKS))
TIMINGS = (["results/timings.csv"] if FRAMEWORKS else []) + (
    [EXTERNAL] if EXTERNAL else []
)
ENVS_DIR = os.path.join(workflow.basedir, config["envs_dir"])
# Per stage, a digest of the library code it runs (its import closure): a rule re-runs when
# its code changes. The benchmark's is per framework.
CODE = dlperf.provenance.workflow_code_digests(FRAMEWORKS)
BENCH_CODE = {framework: CODE[f"bench:{framework}"] for framework in FRAMEWORKS}
# Every run record names the workflow's commit, wherever the jobs run (their working
# directory need not be inside the repository).
WORKFLOW_COMMIT = dlperf.bench.envinfo.git_commit(workflow.basedir)
if WORKFLOW_COMMIT:
    os.environ.setdefault("DLPERF_GIT_COMMIT", WORKFLOW_COMMIT)
WORKFLOW_ENV = "../../envs/workflow.yaml"
# The interpreter running Snakemake has dlperf installed: its `dlperf` command serves
# every job (a conda environment, with --sdm conda, puts its own first on the PATH).
os.environ["PATH"] = os.pathsep.join(
    [os.path.dirname(sys.executable), os.environ["PATH"]]
)


include: "workflow/rules/envs.smk"
include: "workflow/rules/adaptive.smk"
include: "workflow/rules/benchmark.smk"
include: "workflow/rules/aggregate.smk"
include: "workflow/rules/model.smk"
include: "workflow/rules/validate.smk"
include: "workflow/rules/report.smk"


rule all:
    default_target: True
    input:
        # The run records are targets: Snakemake does not re-create a deleted input whose
        # consumers (the tables) are up to date, and a deleted record must be measured again.
        (
            adaptive_measured_records
            if config["adaptive"]["enabled"]
            else [dlperf.config.run_record_path(run) for run in RUNS]
        ),
        ["results/timings.csv", "results/failures.csv"] if FRAMEWORKS else [],
        expand("results/models/{framework}.json", framework=MODELLED),
        "results/validation/summary.csv",
        "results/report/index.html",
        "results/config.json",


include: "workflow/rules/archive.smk"
include: "workflow/rules/remeasure.smk"


onstart:
    # Before any job: outputs of frameworks, networks or runs the config dropped go to history.
    dlperf.study_outputs.retire_for_workflow("results", config)


onerror:
    # Last, each failed job's own error line (above it: the job's inputs and command).
    dlperf.failed_jobs.print_summary(log)
