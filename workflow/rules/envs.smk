# One isolated environment per framework, rebuilt when its requirements file changes.


rule framework_env:
    input:
        # Relative to the working directory when inside it: moving the checkout changes nothing.
        requirements=dlperf.envs.requirements_input(ENVS_DIR, "{framework}"),
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
