# One job per benchmark configuration: framework x network x nodes x procs x batch x data x repeat.
# On a cluster each is one scheduler job sized by the configuration (dlperf.pipeline.cluster): nodes,
# one task per worker, one GPU per worker on cuda, cluster.cpus_per_proc CPUs per task, memory
# and time limit growing with the attempt, whole nodes unless cluster.exclusive is false; the
# partition, account and GPU type come from the profile (profiles/slurm). Locally the resources
# are ignored and the job gets all cores (dlperf.pipeline.cluster.rule_resources, BENCH_RESOURCES
# in common.smk).


wildcard_constraints:
    network=r"[a-z0-9_]+",
    nodes=r"\d+",
    procs=r"\d+",
    batch=r"\d+",
    data=r"\d+",
    rep=r"\d+",
    accum=r"(_a\d+)?",


rule bench:
    input:
        env=LAYOUT.env("{framework}"),
    output:
        # update: Snakemake leaves a previous record in place (it would delete it before the
        # job); `dlperf bench` keeps it in results/history/ before measuring again.
        update(LAYOUT.run_record_wildcards),
    log:
        dlperf.layout.bench_log(),
    conda:
        WORKFLOW_ENV
    # The site's modules (cluster.modules), loaded where the site profile turns them on
    # (software-deployment-method: env-modules; docs/cluster.md, "A site overlay").
    envmodules:
        *config["cluster"]["modules"],
    # A benchmark gets the whole machine: two at once would distort each other's timings.
    threads: workflow.cores
    resources:
        nodes=BENCH_RESOURCES["nodes"],
        tasks=BENCH_RESOURCES["tasks"],
        tasks_per_node=BENCH_RESOURCES["tasks_per_node"],
        tasks_per_gpu=BENCH_RESOURCES["tasks_per_gpu"],
        mpi=BENCH_RESOURCES["mpi"],
        gres=BENCH_RESOURCES["gres"],
        cpus_per_task=BENCH_RESOURCES["cpus_per_task"],
        mem_mb=BENCH_RESOURCES["mem_mb"],
        runtime=BENCH_RESOURCES["runtime"],
        slurm_extra=BENCH_RESOURCES["slurm_extra"],
        launch=BENCH_RESOURCES["launch"],
    # Only what the run measures (dlperf.pipeline.bench_params): analysis settings, the seed and paths
    # never re-measure; the environment is an input, compared by its content (the lock).
    params:
        code=lambda wildcards: BENCH_CODE[wildcards.framework],
        measures=dlperf.pipeline.bench_params.measured_settings(config),
        # Not in the command (resources.launch has the value that applies): re-runs on change.
        threads=dlperf.pipeline.cluster.thread_settings(config),
        timeout=dlperf.pipeline.bench_params.timeout_param(config),
        accumulation=lambda wildcards: dlperf.layout.accumulation_from_suffix(
            wildcards.accum
        ),
    shell:
        "dlperf bench --env {input.env:q} --framework {wildcards.framework} "
        "--network {wildcards.network} --nodes {wildcards.nodes} --procs {wildcards.procs} "
        "--batch-size {wildcards.batch} --data-size {wildcards.data} --rep {wildcards.rep} "
        "--accumulation-steps {params.accumulation} "
        "{params.measures} --timeout {params.timeout} {resources.launch} --out {output:q} "
        "> {log:q} 2>&1"
