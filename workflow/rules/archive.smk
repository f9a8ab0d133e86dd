# The configuration the study runs with, and one file holding the whole study
# (`snakemake archive`), checksummed; see docs/reproducibility.md.


rule study_config:
    output:
        "results/config.json",
    log:
        "logs/study_config.log",
    conda:
        WORKFLOW_ENV
    params:
        settings=json.dumps(config, sort_keys=True),
    shell:
        "dlperf write-config --config-json {params.settings:q} --out {output} > {log} 2>&1"


rule archive:
    input:
        rules.all.input,
        config="results/config.json",
        envs=expand("results/envs/{framework}.json", framework=FRAMEWORKS),
    output:
        "results/dlperf-archive.tar.gz",
    log:
        "logs/archive.log",
    conda:
        WORKFLOW_ENV
    shell:
        "dlperf archive --results results --out {output} > {log} 2>&1"
