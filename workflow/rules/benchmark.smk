# One job per benchmark configuration: framework x network x nodes x procs x batch x data x repeat.


wildcard_constraints:
    network=r"[a-z0-9_]+",
    nodes=r"\d+",
    procs=r"\d+",
    batch=r"\d+",
    data=r"\d+",
    rep=r"\d+",


rule bench:
    input:
        env="results/envs/{framework}.json",
    output:
        "results/runs/{framework}/{network}/n{nodes}_p{procs}_b{batch}_d{data}_r{rep}.json",
    log:
        "logs/bench/{framework}/{network}/n{nodes}_p{procs}_b{batch}_d{data}_r{rep}.log",
    conda:
        WORKFLOW_ENV
    # A benchmark gets the whole machine: two at once would distort each other's timings.
    threads: workflow.cores
    params:
        code=CODE["bench"],
        device=config["device"],
        dataset=config["dataset"],
        warmup=config["warmup_iters"],
        threads=config["threads_per_proc"],
        seed=config["seed"],
        timeout=config["timeout_s"],
    shell:
        "dlperf bench --env {input.env} --framework {wildcards.framework} "
        "--network {wildcards.network} --device {params.device} --dataset {params.dataset} "
        "--nodes {wildcards.nodes} "
        "--procs {wildcards.procs} --batch-size {wildcards.batch} --data-size {wildcards.data} "
        "--rep {wildcards.rep} --warmup-iters {params.warmup} --threads-per-proc {params.threads} "
        "--seed {params.seed} --timeout {params.timeout} --out {output} > {log} 2>&1"
