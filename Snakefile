# dlperf: benchmark -> aggregate -> fit -> validate -> report.
# The rules stay thin; everything they call lives in src/dlperf.
import os

import dlperf.config


configfile: "config/config.yaml"


try:
    config = dlperf.config.validated(config)
except dlperf.config.ConfigError as error:
    raise WorkflowError(str(error)) from None

RUNS = dlperf.config.run_configs(config)
FRAMEWORKS = config["frameworks"]
ENVS_DIR = os.path.join(workflow.basedir, config["envs_dir"])


include: "workflow/rules/envs.smk"
include: "workflow/rules/benchmark.smk"
include: "workflow/rules/aggregate.smk"
include: "workflow/rules/model.smk"
include: "workflow/rules/validate.smk"
include: "workflow/rules/report.smk"


rule all:
    input:
        "results/timings.csv",
        "results/failures.csv",
        expand("results/models/{framework}.json", framework=FRAMEWORKS),
        "results/validation/summary.csv",
        "results/report/index.html",
    default_target: True
