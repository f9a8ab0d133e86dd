# Cross-validation of every model under every configured protocol, one job per framework;
# the per-framework summaries are then combined into one table.


rule validate:
    input:
        timings=TIMINGS,
    output:
        points=report(
            "results/validation/{framework}.csv",
            caption="../report/validation_points.rst",
            category="Validation",
            labels={"framework": "{framework}", "table": "held-out predictions"},
        ),
        summary=report(
            "results/validation/{framework}.summary.csv",
            caption="../report/validation_summary.rst",
            category="Validation",
            labels={"framework": "{framework}", "table": "summary"},
        ),
    log:
        "logs/validate/{framework}.log",
    conda:
        WORKFLOW_ENV
    params:
        code=CODE["validate"],
        settings=json.dumps(
            {
                "models": config["models"],
                "validation": config["validation"],
                "seed": config["seed"],
            },
            sort_keys=True,
        ),
        out_dir=lambda wildcards, output: os.path.dirname(output.summary),
    shell:
        "dlperf validate --timings {input.timings:q} --framework {wildcards.framework} "
        "--config-json {params.settings:q} --out {params.out_dir} --no-summary > {log} 2>&1"


rule validation_summary:
    input:
        expand("results/validation/{framework}.summary.csv", framework=MODELLED),
    output:
        report(
            "results/validation/summary.csv",
            caption="../report/validation_summary.rst",
            category="Validation",
            labels={"framework": "all", "table": "summary"},
        ),
    log:
        "logs/validation_summary.log",
    conda:
        WORKFLOW_ENV
    shell:
        "dlperf combine {input} --out {output} > {log} 2>&1"
