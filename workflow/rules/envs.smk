# One isolated environment per framework, rebuilt when its requirements file changes.


rule framework_env:
    input:
        requirements=os.path.join(ENVS_DIR, "{framework}.txt"),
    output:
        "results/envs/{framework}.json",
    log:
        "logs/envs/{framework}.log",
    wildcard_constraints:
        framework="|".join(
            dlperf.config.schema()["properties"]["frameworks"]["items"]["enum"]
        ),
    conda:
        WORKFLOW_ENV
    params:
        root=f"--root {config['env_root']}" if config["env_root"] else "",
    shell:
        "dlperf env --framework {wildcards.framework} --requirements {input.requirements} "
        "{params.root} --out {output} > {log} 2>&1"
