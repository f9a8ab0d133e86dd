# One isolated environment per framework, rebuilt when its requirements file changes; or the
# site's interpreter or container image (framework_envs), probed before any benchmark.
import dlperf.site_envs


rule framework_env:
    input:
        # Relative to the working directory when inside it: moving the checkout changes nothing.
        requirements=dlperf.site_envs.requirements_input(config, ENVS_DIR),
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
        site=dlperf.site_envs.env_options(config),
        requirements=lambda wildcards, input: (
            f"--requirements {input.requirements}" if input.requirements else ""
        ),
    shell:
        "dlperf env --framework {wildcards.framework} {params.requirements} {params.site} "
        "{params.root} --out {output} > {log} 2>&1"
