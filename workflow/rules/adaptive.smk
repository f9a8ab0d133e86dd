# Adaptive mode (config `adaptive.enabled`): rounds of measurement chosen by the models'
# uncertainty instead of the whole grid. Round r is a checkpoint: it reads the run records of
# rounds 0..r-1 and writes the configurations to measure next (results/adaptive/round{r}.json);
# the ordinary bench rule measures them, so a finished round is never measured again. The
# helper functions that read the rounds are in common.smk.


checkpoint adaptive_round:
    input:
        records=lambda wildcards: adaptive_chosen_records(int(wildcards.round)),
    output:
        LAYOUT.adaptive_round("{round}"),
    log:
        dlperf.layout.log("adaptive", "round{round}"),
    conda:
        WORKFLOW_ENV
    params:
        code=CODE["adaptive"],
        config=json.dumps(
            {
                key: config[key]
                for key in (
                    "frameworks",
                    "networks",
                    "device",
                    "nodes",
                    "procs",
                    "batch_sizes",
                    "data_sizes",
                    "repeats",
                    "max_procs_per_node",
                    "seed",
                    "adaptive",
                )
                if key in config
            },
            sort_keys=True,
        ),
    shell:
        "dlperf adaptive-round --config-json {params.config:q} --round {wildcards.round} "
        "--out {output:q} {input.records:q} > {log:q} 2>&1"
