# One job per benchmark configuration: framework x network x nodes x procs x batch x data x repeat.
# On a cluster each is one scheduler job sized by the configuration (dlperf.cluster): nodes,
# one task per worker, one GPU per worker on cuda, cluster.cpus_per_proc CPUs per task, memory
# and time limit growing with the attempt; the partition, account and GPU type come from the
# profile (profiles/slurm). Locally the resources are ignored and the job gets all cores.
import dlperf.cluster

try:
    dlperf.cluster.check(config)
except dlperf.cluster.ClusterConfigError as error:
    raise WorkflowError(f"invalid configuration: {error}") from None


# Resources every job of the sweep shares are given as values (see sweep_resource).
LAYOUTS = dlperf.config.run_layouts(config)


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
        env="results/envs/{framework}.json",
    output:
        # update: Snakemake leaves a previous record in place (it would delete it before the
        # job); `dlperf bench` keeps it in results/history/ before measuring again.
        update(
            "results/runs/{framework}/{network}/n{nodes}_p{procs}_b{batch}_d{data}_r{rep}{accum}.json"
        ),
    log:
        "logs/bench/{framework}/{network}/n{nodes}_p{procs}_b{batch}_d{data}_r{rep}{accum}.log",
    conda:
        WORKFLOW_ENV
    # A benchmark gets the whole machine: two at once would distort each other's timings.
    threads: workflow.cores
    resources:
        nodes=dlperf.cluster.sweep_resource("nodes", config, LAYOUTS),
        tasks=dlperf.cluster.sweep_resource("tasks", config, LAYOUTS),
        tasks_per_node=dlperf.cluster.sweep_resource("tasks_per_node", config, LAYOUTS),
        tasks_per_gpu=dlperf.cluster.sweep_resource("tasks_per_gpu", config, LAYOUTS),
        mpi=dlperf.cluster.sweep_resource("mpi", config, LAYOUTS),
        gres=dlperf.cluster.sweep_resource("gres", config, LAYOUTS),
        cpus_per_task=dlperf.cluster.sweep_resource("cpus_per_task", config, LAYOUTS),
        mem_mb=dlperf.cluster.sweep_resource("mem_mb", config, LAYOUTS),
        runtime=dlperf.cluster.sweep_resource("runtime", config, LAYOUTS),
        launch=dlperf.cluster.bench_launch(config, workflow),
    # Only what the run measures (dlperf.remeasure): analysis settings, the seed and paths
    # never re-measure; the environment is an input, compared by its content (the lock).
    params:
        code=lambda wildcards: BENCH_CODE[wildcards.framework],
        measures=dlperf.remeasure.measured_settings(config),
        # Not in the command (resources.launch has the value that applies): re-runs on change.
        threads=dlperf.cluster.thread_settings(config),
        timeout=dlperf.remeasure.timeout_param(config),
        accumulation=lambda wildcards: dlperf.config.accumulation_from_suffix(
            wildcards.accum
        ),
    shell:
        "dlperf bench --env {input.env} --framework {wildcards.framework} "
        "--network {wildcards.network} --nodes {wildcards.nodes} --procs {wildcards.procs} "
        "--batch-size {wildcards.batch} --data-size {wildcards.data} --rep {wildcards.rep} "
        "--accumulation-steps {params.accumulation} "
        "{params.measures} --timeout {params.timeout} {resources.launch} --out {output} "
        "> {log} 2>&1"
