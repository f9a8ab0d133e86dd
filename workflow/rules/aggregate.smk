# Every run record -> one tidy timings table; failed runs kept apart.


rule aggregate:
    input:
        records=[dlperf.config.run_record_path(run) for run in RUNS],
    output:
        timings="results/timings.csv",
        parquet="results/timings.parquet",
        failures="results/failures.csv",
    log:
        "logs/aggregate.log",
    run:
        from dlperf import logs, stages

        with logs.to_file(log[0]):
            stages.aggregate(input.records, output.timings, output.parquet, output.failures)
