# The self-contained HTML report; its figures (PNG and SVG) go into a directory beside it.


rule report:
    input:
        timings=TIMINGS,
        failures=["results/failures.csv"] if FRAMEWORKS else [],
        models=expand("results/models/{framework}.json", framework=MODELLED),
        summary="results/validation/summary.csv",
        predictions=expand("results/validation/{framework}.csv", framework=MODELLED),
        rounds=adaptive_round_files if config["adaptive"]["enabled"] else [],
    output:
        html=report(
            "results/report/index.html",
            caption="../report/index.rst",
            category="Report",
            labels={"framework": "all", "figure": "HTML report"},
        ),
        figures=report(
            directory("results/report/figures"),
            patterns=["{framework}/{figure}.svg"],
            caption="../report/figure.rst",
            category="Figures",
            subcategory="{framework}",
            labels={"framework": "{framework}", "figure": "{figure}"},
        ),
    log:
        "logs/report.log",
    conda:
        WORKFLOW_ENV
    params:
        code=CODE["report"],
        settings=json.dumps(config, sort_keys=True),
        failures=lambda wildcards, input: (
            f"--failures {input.failures}" if input.failures else ""
        ),
    shell:
        "dlperf report --timings {input.timings:q} {params.failures} "
        "--models {input.models} --summary {input.summary} --predictions {input.predictions} "
        "--config-json {params.settings:q} --out {output.html} --figures {output.figures} "
        "--results results "
        "--adaptive-rounds {input.rounds} "
        "> {log} 2>&1"
