# Every run record -> one tidy timings table; failed runs kept apart.


rule aggregate:
    input:
        records=RUN_RECORDS,
    # update(): Snakemake would delete the tables before the job; a failed aggregate (a damaged
    # record) keeps the previous tables until new ones are written (atomically, dlperf.io).
    output:
        timings=update(LAYOUT.timings),
        parquet=update(LAYOUT.timings_parquet),
        failures=update(LAYOUT.failures),
    log:
        dlperf.layout.log("aggregate"),
    conda:
        WORKFLOW_ENV
    params:
        code=CODE["aggregate"],
    shell:
        "dlperf aggregate {input.records:q} --timings {output.timings:q} "
        "--parquet {output.parquet:q} --failures {output.failures:q} > {log:q} 2>&1"
