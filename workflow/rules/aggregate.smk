# Every run record -> one tidy timings table; failed runs kept apart.


rule aggregate:
    input:
        records=(
            adaptive_measured_records
            if config["adaptive"]["enabled"]
            else [dlperf.config.run_record_path(run) for run in RUNS]
        ),
    output:
        timings="results/timings.csv",
        parquet="results/timings.parquet",
        failures="results/failures.csv",
    log:
        "logs/aggregate.log",
    conda:
        WORKFLOW_ENV
    params:
        code=CODE["aggregate"],
    shell:
        "dlperf aggregate {input.records} --timings {output.timings} "
        "--parquet {output.parquet} --failures {output.failures} > {log} 2>&1"
