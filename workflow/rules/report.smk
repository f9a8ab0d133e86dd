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
    conda:
        WORKFLOW_ENV
    params:
        settings=json.dumps(
            {k: v for k, v in config.items() if k not in ("models", "validation")}
        ),
    shell:
        "dlperf report --timings {input.timings} --failures {input.failures} "
        "--models {input.models} --summary {input.summary} --predictions {input.predictions} "
        "--config-json {params.settings:q} --out {output} > {log} 2>&1"
