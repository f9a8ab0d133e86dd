# `snakemake remeasure_disturbed`: the runs the timings flag as disturbed (other programs used
# the CPU during their epoch) are measured again, and only they; their previous records are
# kept in results/history/. Then `snakemake` (make run) refreshes tables, models and report.
import dlperf.disturbed_runs


checkpoint forget_disturbed:
    input:
        timings="results/timings.csv",
    output:
        temp("results/disturbed.json"),
    log:
        "logs/forget_disturbed.log",
    conda:
        WORKFLOW_ENV
    shell:
        "dlperf forget-disturbed --timings {input.timings} --results results --out {output} "
        "> {log} 2>&1"


rule remeasure_disturbed:
    input:
        listing=lambda wildcards: checkpoints.forget_disturbed.get().output[0],
        records=lambda wildcards: dlperf.disturbed_runs.listed_records(
            checkpoints.forget_disturbed.get().output[0]
        ),
    log:
        "logs/remeasure_disturbed.log",
    localrule: True
    conda:
        WORKFLOW_ENV
    shell:
        "cp {input.listing} {log}"
