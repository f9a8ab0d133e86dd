# dlperf: benchmark -> aggregate -> fit -> validate -> report.
# The rules stay thin: each names its files and calls one `dlperf` subcommand. What they share
# (the validated config, the study's paths, code digests, helper functions) is in common.smk.
import os

from snakemake.utils import min_version

# The version pyproject.toml pins: the executor plugins and the report follow its interfaces.
min_version("9.27")


# The default configuration lives with the workflow, wherever the study's directory is
# (`snakemake --directory <study>`, `make run STUDY=<study>`).
configfile: os.path.join(workflow.basedir, "config", "config.yaml")


include: "workflow/rules/common.smk"
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
        records_to_measure,
        BENCH_TABLES,
        expand(LAYOUT.model("{framework}"), framework=MODELLED),
        LAYOUT.validation_summary,
        LAYOUT.report,
        LAYOUT.config,


include: "workflow/rules/archive.smk"
include: "workflow/rules/remeasure.smk"
