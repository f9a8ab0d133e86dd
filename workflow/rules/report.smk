# The self-contained HTML report (figures embedded and saved beside it).


rule report:
    input:
        timings="results/timings.csv",
        failures="results/failures.csv",
        models=expand("results/models/{framework}.json", framework=FRAMEWORKS),
        summary="results/validation/summary.csv",
        predictions=expand("results/validation/{framework}.csv", framework=FRAMEWORKS),
    output:
        "results/report/index.html",
    log:
        "logs/report.log",
    params:
        config={k: v for k, v in config.items() if k not in ("models", "validation")},
    run:
        from dlperf import logs, stages

        with logs.to_file(log[0]):
            stages.report(
                input.timings,
                input.failures,
                input.models,
                input.summary,
                input.predictions,
                params.config,
                output[0],
            )
