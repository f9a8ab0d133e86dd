# Per framework: the generic model and the configured baselines, fitted on the timings.


rule fit:
    input:
        timings=TIMINGS,
        # The user's GPU catalogue: an edited one fits again.
        hardware=HARDWARE,
    output:
        LAYOUT.model("{framework}"),
    log:
        dlperf.layout.log("fit", "{framework}"),
    conda:
        WORKFLOW_ENV
    params:
        code=CODE["fit"],
        settings=json.dumps(
            {
                "models": config["models"],
                "seed": config["seed"],
                "hardware": config["hardware"],
            },
            sort_keys=True,
        ),
        # Most runs disturbed: stop here and say so (dlperf.measurements.preflight).
        max_disturbed=config["preflight"]["max_disturbed_fraction"],
    shell:
        "dlperf fit --timings {input.timings:q} --framework {wildcards.framework} "
        "--config-json {params.settings:q} --max-disturbed {params.max_disturbed} "
        "--out {output:q} --allow-unfitted > {log:q} 2>&1"
