# Per framework: the generic model and the configured baselines, fitted on the timings.


rule fit:
    input:
        timings=TIMINGS,
    output:
        "results/models/{framework}.json",
    log:
        "logs/fit/{framework}.log",
    conda:
        WORKFLOW_ENV
    params:
        code=CODE["fit"],
        settings=json.dumps(
            {"models": config["models"], "seed": config["seed"]}, sort_keys=True
        ),
    shell:
        "dlperf fit --timings {input.timings:q} --framework {wildcards.framework} "
        "--config-json {params.settings:q} --out {output} > {log} 2>&1"
