# Cross-validation of every model under every configured protocol.


rule validate:
    input:
        timings="results/timings.csv",
    output:
        points="results/validation/{framework}.csv",
        summary="results/validation/{framework}.summary.csv",
    log:
        "logs/validate/{framework}.log",
    params:
        models=config["models"],
        protocols=config["validation"]["protocols"],
        bootstrap=config["validation"]["bootstrap"],
        seed=config["seed"],
    run:
        from dlperf import logs, stages

        with logs.to_file(log[0]):
            stages.validate(
                input.timings,
                wildcards.framework,
                params.models,
                params.protocols,
                params.seed,
                output.points,
                output.summary,
                n_boot=params.bootstrap,
            )


rule validation_summary:
    input:
        expand("results/validation/{framework}.summary.csv", framework=FRAMEWORKS),
    output:
        "results/validation/summary.csv",
    log:
        "logs/validate/summary.log",
    run:
        from dlperf import logs, stages

        with logs.to_file(log[0]):
            stages.combine(input, output[0])
