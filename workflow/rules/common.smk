# What the rules share: the validated configuration, the study's paths (dlperf.layout), the
# code digests that re-run a stage when its code changes, and the rules' helper functions.
import json
import os
import sys

import dlperf.adaptive.rounds
import dlperf.bench.envinfo
import dlperf.pipeline.cluster
import dlperf.config
import dlperf.pipeline.failed_jobs
import dlperf.pipeline.gc_tuning
import dlperf.layout
import dlperf.pipeline.provenance
import dlperf.pipeline.bench_params
import dlperf.report.failure_reasons
import dlperf.study.outputs
import dlperf.study.remembered
import dlperf.pipeline.sweep_checks


report: "../report/workflow.rst"


envvars:
    "PATH",


# Snakemake builds tens of objects per job: collect garbage less often while it plans.
dlperf.pipeline.gc_tuning.collect_garbage_less_often()

# Every path of the study, relative to its directory (`snakemake --directory <study>`).
LAYOUT = dlperf.layout.WORKFLOW


try:
    # A user's `models` or `validation.protocols` replaces the default's (not merged into it).
    config = dlperf.config.with_user_choices(
        config, workflow.config_settings.overwrite_config
    )
    config = dlperf.config.validated(config)
    if dlperf.pipeline.cluster.is_planning_process(workflow):
        # The targets are known only from the command line while the Snakefile loads.
        dlperf.study.remembered.check_study_is_there(
            sys.argv[1:], workflow.config_settings.overwrite_config, LAYOUT.config
        )
    # Without a config of its own, the run continues the study with the one it remembers.
    config = dlperf.config.validated(
        dlperf.study.remembered.continued(
            config, workflow.config_settings.overwrite_config, LAYOUT.config
        )
    )
    if config["frameworks"] and dlperf.pipeline.cluster.is_local_run(workflow):
        MACHINE_PROBLEMS = dlperf.pipeline.sweep_checks.local_machine_problems(
            config,
            dlperf.bench.envinfo.available_cores(),
            dlperf.pipeline.sweep_checks.visible_gpus(),
        )
        if MACHINE_PROBLEMS:
            raise dlperf.config.ConfigError("\n".join(MACHINE_PROBLEMS))
    EXTERNAL = config["external_timings"]
    # The user's own GPU catalogue (docs/hardware.md), an input of fit, validate and report.
    HARDWARE = [config["hardware"]] if config["hardware"] else []
    EXTERNAL_FRAMEWORKS = dlperf.study.outputs.external_frameworks(config)
except (dlperf.config.ConfigError, ValueError, FileNotFoundError) as error:
    raise WorkflowError(str(error)) from None

try:
    dlperf.pipeline.cluster.check(config, dlperf.config.run_layouts(config))
except dlperf.pipeline.cluster.ClusterConfigError as error:
    raise WorkflowError(f"invalid configuration: {error}") from None

# Before planning: run records a dropped value retired, asked for again, are restored rather
# than measured again (a dry run lists them and what a run would retire).
if dlperf.pipeline.cluster.is_planning_process(workflow):
    dlperf.study.outputs.restore_for_workflow(
        LAYOUT.root, config, dlperf.pipeline.cluster.is_dry_run(sys.argv)
    )
RUNS = dlperf.config.run_configs(config)
# Frameworks we benchmark, and all we model (ours plus those of external timings).
FRAMEWORKS = config["frameworks"]
MODELLED = sorted(set(FRAMEWORKS) | set(EXTERNAL_FRAMEWORKS))
TIMINGS = ([LAYOUT.timings] if FRAMEWORKS else []) + ([EXTERNAL] if EXTERNAL else [])
BENCH_TABLES = [LAYOUT.timings, LAYOUT.failures] if FRAMEWORKS else []
ENVS_DIR = os.path.join(workflow.basedir, config["envs_dir"])
# Per stage, a digest of the library code it runs (its import closure): a rule re-runs when
# its code changes. The benchmark's is per framework.
CODE = dlperf.pipeline.provenance.workflow_code_digests(FRAMEWORKS)
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
# Sized per job for a cluster; plain values on a local run, which ignores them
# (dlperf.pipeline.cluster.rule_resources).
BENCH_RESOURCES = dlperf.pipeline.cluster.rule_resources(
    config, dlperf.config.run_layouts(config), workflow
)


def adaptive_chosen_records(rounds):
    """Run records of every configuration chosen in rounds 0..rounds-1 (each round's file is a
    checkpoint: asking for it makes Snakemake run that round first)."""
    records = []
    for number in range(rounds):
        path = checkpoints.adaptive_round.get(round=number).output[0]
        chosen = dlperf.adaptive.rounds.read_round(path)["chosen"]
        records += dlperf.adaptive.rounds.record_paths(config, chosen)
    return records


def adaptive_measured_records(wildcards=None):
    """The records of every round until one stops (or the configured number of rounds)."""
    records = []
    for number in range(config["adaptive"]["max_rounds"]):
        path = checkpoints.adaptive_round.get(round=number).output[0]
        result = dlperf.adaptive.rounds.read_round(path)
        records += dlperf.adaptive.rounds.record_paths(config, result["chosen"])
        if result["stop"]:
            break
    return records


def adaptive_round_files(wildcards=None):
    files = []
    for number in range(config["adaptive"]["max_rounds"]):
        path = checkpoints.adaptive_round.get(round=number).output[0]
        files.append(path)
        if dlperf.adaptive.rounds.read_round(path)["stop"]:
            break
    return files


# The run records of the study: the grid's, or those an adaptive sweep's rounds chose.
RUN_RECORDS = (
    adaptive_measured_records
    if config["adaptive"]["enabled"]
    else [LAYOUT.record_of(run) for run in RUNS]
)


def records_to_measure(wildcards=None):
    """The run records `all` asks for by name: those missing while the timings table exists.
    Snakemake does not re-create a deleted input whose consumers (the tables) are up to date,
    and a deleted record must be measured again; without the table, aggregate runs and asks
    for every record itself. Not every record: Snakemake prints a job's inputs and reason as
    it starts it, and `all` is the last job of every run."""
    if not FRAMEWORKS or not os.path.exists(LAYOUT.timings):
        return []
    records = RUN_RECORDS() if callable(RUN_RECORDS) else RUN_RECORDS
    return [record for record in records if not os.path.exists(record)]


onstart:
    # Before any job: outputs of frameworks, networks or runs the config dropped go to history.
    dlperf.study.outputs.retire_for_workflow(LAYOUT.root, config)


onerror:
    # Last, each failed job's own error line (above it: the job's inputs and command).
    dlperf.pipeline.failed_jobs.print_summary(log)


onsuccess:
    # Last, when no benchmark run succeeded: how many failed and the most frequent reason.
    dlperf.report.failure_reasons.print_when_all_failed(
        LAYOUT.failures, LAYOUT.timings
    )
