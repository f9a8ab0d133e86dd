# `snakemake remeasure_disturbed`: the runs the timings flag as disturbed (other programs used
# the CPU during their epoch) are measured again, and only they; their previous records are
# kept in results/history/. Then `snakemake` (make run) refreshes tables, models and report.
import dlperf.study.disturbed_runs


checkpoint forget_disturbed:
    input:
        timings=LAYOUT.timings,
    output:
        temp(LAYOUT.disturbed),
    log:
        dlperf.layout.log("forget_disturbed"),
    conda:
        WORKFLOW_ENV
    params:
        # The results directory as a whole (records and their history).
        results=lambda wildcards: LAYOUT.root,
    shell:
        "dlperf forget-disturbed --timings {input.timings:q} --results {params.results:q} "
        "--out {output:q} > {log:q} 2>&1"


rule remeasure_disturbed:
    input:
        listing=lambda wildcards: checkpoints.forget_disturbed.get().output[0],
        records=lambda wildcards: dlperf.study.disturbed_runs.listed_records(
            checkpoints.forget_disturbed.get().output[0]
        ),
    log:
        dlperf.layout.log("remeasure_disturbed"),
    localrule: True
    conda:
        WORKFLOW_ENV
    shell:
        "cp {input.listing:q} {log:q}"
