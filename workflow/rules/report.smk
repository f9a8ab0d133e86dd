# The self-contained HTML report; its figures (PNG and SVG) go into a directory beside it.


rule report:
    input:
        timings=TIMINGS,
        failures=[LAYOUT.failures] if FRAMEWORKS else [],
        models=expand(LAYOUT.model("{framework}"), framework=MODELLED),
        summary=LAYOUT.validation_summary,
        predictions=expand(LAYOUT.validation_points("{framework}"), framework=MODELLED),
        rounds=adaptive_round_files if config["adaptive"]["enabled"] else [],
        hardware=HARDWARE,
    output:
        html=report(
            LAYOUT.report,
            caption="../report/index.rst",
            category="Report",
            labels={"framework": "all", "figure": "HTML report"},
        ),
        figures=report(
            directory(LAYOUT.figures),
            patterns=["{framework}/{figure}.svg"],
            caption="../report/figure.rst",
            category="Figures",
            subcategory="{framework}",
            labels={"framework": "{framework}", "figure": "{figure}"},
        ),
    log:
        dlperf.layout.log("report"),
    conda:
        WORKFLOW_ENV
    params:
        code=CODE["report"],
        settings=json.dumps(config, sort_keys=True),
        failures=lambda wildcards, input: (
            ["--failures", *input.failures] if input.failures else []
        ),
        # The results directory as a whole: the report counts the superseded records.
        results=lambda wildcards: LAYOUT.root,
    shell:
        "dlperf report --timings {input.timings:q} {params.failures:q} "
        "--models {input.models:q} --summary {input.summary:q} "
        "--predictions {input.predictions:q} --config-json {params.settings:q} "
        "--out {output.html:q} --figures {output.figures:q} --results {params.results:q} "
        "--adaptive-rounds {input.rounds:q} > {log:q} 2>&1"
