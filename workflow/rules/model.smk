# Per framework: the generic model (and the configured baselines), fitted on the timings.


rule fit:
    input:
        timings="results/timings.csv",
    output:
        "results/models/{framework}.json",
    log:
        "logs/fit/{framework}.log",
    params:
        models=config["models"],
        seed=config["seed"],
    run:
        from dlperf import logs, stages

        with logs.to_file(log[0]):
            stages.fit(input.timings, wildcards.framework, params.models, params.seed, output[0])
