# One isolated environment per framework, rebuilt when its requirements file changes; or the
# site's interpreter or container image (framework_envs), probed before any benchmark.
# ({params.site} is shell-quoted by dlperf.environments.site.env_options.)
import dlperf.environments.site


rule framework_env:
    input:
        # Relative to the working directory when inside it: moving the checkout changes nothing.
        requirements=dlperf.environments.site.requirements_input(config, ENVS_DIR),
    output:
        LAYOUT.env("{framework}"),
    log:
        dlperf.layout.log("envs", "{framework}"),
    wildcard_constraints:
        framework="|".join(
            dlperf.config.schema()["properties"]["frameworks"]["items"]["enum"]
        ),
    conda:
        WORKFLOW_ENV
    params:
        root=["--root", config["env_root"]] if config["env_root"] else [],
        site=dlperf.environments.site.env_options(config),
        requirements=lambda wildcards, input: (
            ["--requirements", input.requirements] if input.requirements else []
        ),
    shell:
        "dlperf env --framework {wildcards.framework} {params.requirements:q} {params.site} "
        "{params.root:q} --out {output:q} > {log:q} 2>&1"
