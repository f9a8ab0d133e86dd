# The configuration the study runs with, and one file holding the whole study
# (`snakemake archive`), checksummed; see docs/reproducibility.md.


rule study_config:
    output:
        LAYOUT.config,
    log:
        dlperf.layout.log("study_config"),
    conda:
        WORKFLOW_ENV
    params:
        settings=json.dumps(config, sort_keys=True),
    shell:
        "dlperf write-config --config-json {params.settings:q} --out {output:q} > {log:q} 2>&1"


rule archive:
    input:
        rules.all.input,
        config=LAYOUT.config,
        envs=expand(LAYOUT.env("{framework}"), framework=FRAMEWORKS),
    output:
        archive=LAYOUT.archive,
        # Its own SHA-256, to be recorded elsewhere (docs/reproducibility.md).
        digest=LAYOUT.archive_digest,
    log:
        dlperf.layout.log("archive"),
    conda:
        WORKFLOW_ENV
    params:
        # The results directory as a whole (the study is every file below it).
        results=lambda wildcards: LAYOUT.root,
    shell:
        "dlperf archive --results {params.results:q} --out {output.archive:q} > {log:q} 2>&1"
