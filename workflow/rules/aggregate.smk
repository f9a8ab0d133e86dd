# Every run record -> one tidy timings table; failed runs kept apart.


rule aggregate:
    input:
        records=(
            adaptive_measured_records
            if config["adaptive"]["enabled"]
            else [dlperf.config.run_record_path(run) for run in RUNS]
        ),
    # update(): Snakemake would delete the tables before the job; a failed aggregate (a damaged
    # record) keeps the previous tables until new ones are written (atomically, dlperf.io).
    output:
        timings=update("results/timings.csv"),
        parquet=update("results/timings.parquet"),
        failures=update("results/failures.csv"),
    log:
        "logs/aggregate.log",
    conda:
        WORKFLOW_ENV
    params:
        code=CODE["aggregate"],
    shell:
        "dlperf aggregate {input.records} --timings {output.timings} "
        "--parquet {output.parquet} --failures {output.failures} > {log} 2>&1"
