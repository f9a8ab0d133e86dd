# Cross-validation of every model under every configured protocol, for every framework.


rule validate:
    input:
        timings="results/timings.csv",
    output:
        points=expand("results/validation/{framework}.csv", framework=FRAMEWORKS),
        summaries=expand(
            "results/validation/{framework}.summary.csv", framework=FRAMEWORKS
        ),
        summary="results/validation/summary.csv",
    log:
        "logs/validate.log",
    conda:
        WORKFLOW_ENV
    params:
        settings=json.dumps(
            {
                "models": config["models"],
                "validation": config["validation"],
                "seed": config["seed"],
            }
        ),
        frameworks=" ".join(f"--framework {framework}" for framework in FRAMEWORKS),
        out_dir=lambda wildcards, output: os.path.dirname(output.summary),
    shell:
        "dlperf validate --timings {input.timings} {params.frameworks} "
        "--config-json {params.settings:q} --out {params.out_dir} > {log} 2>&1"
