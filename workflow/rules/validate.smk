# Cross-validation of every model under every configured protocol, one job per framework;
# the per-framework summaries are then combined into one table.


rule validate:
    input:
        timings=TIMINGS,
        # The user's GPU catalogue: an edited one fits again.
        hardware=HARDWARE,
    output:
        points=report(
            LAYOUT.validation_points("{framework}"),
            caption="../report/validation_points.rst",
            category="Validation",
            labels={"framework": "{framework}", "table": "held-out predictions"},
        ),
        summary=report(
            LAYOUT.validation_summary_of("{framework}"),
            caption="../report/validation_summary.rst",
            category="Validation",
            labels={"framework": "{framework}", "table": "summary"},
        ),
    log:
        dlperf.layout.log("validate", "{framework}"),
    conda:
        WORKFLOW_ENV
    params:
        code=CODE["validate"],
        settings=json.dumps(
            {
                "models": config["models"],
                "validation": config["validation"],
                "seed": config["seed"],
                "hardware": config["hardware"],
            },
            sort_keys=True,
        ),
        out_dir=lambda wildcards, output: os.path.dirname(output.summary),
    shell:
        "dlperf validate --timings {input.timings:q} --framework {wildcards.framework} "
        "--config-json {params.settings:q} --out {params.out_dir:q} --no-summary > {log:q} 2>&1"


rule validation_summary:
    input:
        expand(LAYOUT.validation_summary_of("{framework}"), framework=MODELLED),
    output:
        report(
            LAYOUT.validation_summary,
            caption="../report/validation_summary.rst",
            category="Validation",
            labels={"framework": "all", "table": "summary"},
        ),
    log:
        dlperf.layout.log("validation_summary"),
    conda:
        WORKFLOW_ENV
    shell:
        "dlperf combine {input:q} --out {output:q} > {log:q} 2>&1"
