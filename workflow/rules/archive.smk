# One file holding the whole study (`snakemake archive`), checksummed; see docs/reproducibility.md.


rule archive:
    input:
        rules.all.input,
        envs=expand("results/envs/{framework}.json", framework=FRAMEWORKS),
    output:
        "results/dlperf-archive.tar.gz",
    log:
        "logs/archive.log",
    conda:
        WORKFLOW_ENV
    params:
        settings=json.dumps(config, sort_keys=True),
    shell:
        "dlperf archive --results results --config-json {params.settings:q} --out {output} "
        "> {log} 2>&1"
