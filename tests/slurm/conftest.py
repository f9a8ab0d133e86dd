"""A live local Slurm cluster of two hosts for the tests in this directory.

The session fixture starts it with scripts/local-slurm-start.sh (root only: it installs
packages with apt, starts munged and slurmctld, and one slurmd per host, each host a network
namespace with its own name and address, their links limited to 200 Mbit/s) and stops it
at the end if this session started it. Everything else about Slurm in tests/slurm talks to
that cluster: single-node jobs land on either host, multi-node jobs span both.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
STATE = Path(os.environ.get("LOCAL_SLURM_STATE", "/run/local-slurm"))
# Two hosts with 4 CPUs each (more than the machine's cores is allowed) so the test jobs can
# run side by side, 2 fake GPUs each, and a link between them slow enough that exchanging a
# gradient between hosts costs visibly more than inside one.
HOSTS = ("dlnode1", "dlnode2")
LINK_MBIT = 200
CLUSTER_ENV = {
    "LOCAL_SLURM_NODES": str(len(HOSTS)),
    "LOCAL_SLURM_LINK_MBIT": str(LINK_MBIT),
    "LOCAL_SLURM_CPUS": "4",
    "LOCAL_SLURM_GPUS": "2",
    "LOCAL_SLURM_TIMEOUT": "120",
}


def _own_daemons_running() -> bool:
    """True if the start script's slurmctld (one it recorded) is running."""
    try:
        pid = (STATE / "slurmctld.pid").read_text().strip()
        return Path(f"/proc/{pid}/comm").read_text().strip() == "slurmctld"
    except OSError:
        return False


@pytest.fixture(scope="session")
def local_slurm():
    if os.geteuid() != 0:
        pytest.skip(
            "the live Slurm tests need root "
            "(scripts/local-slurm-start.sh installs packages and starts daemons)"
        )
    installed = all(shutil.which(tool) for tool in ("slurmctld", "slurmd", "sbatch", "munged"))
    if not installed and not (shutil.which("apt-get") and shutil.which("dpkg-query")):
        pytest.skip(
            "Slurm is not installed and apt-get is not available to install it "
            "(scripts/local-slurm-start.sh supports Debian/Ubuntu)"
        )
    was_running = _own_daemons_running()
    env = {**os.environ, **CLUSTER_ENV}
    proc = subprocess.run(
        ["bash", str(REPO / "scripts" / "local-slurm-start.sh")],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, f"local-slurm-start.sh failed:\n{proc.stdout}\n{proc.stderr}"
    assert "ready: node" in proc.stderr, proc.stderr
    yield {
        "started_here": not was_running,
        "start_log": proc.stderr,
        "hosts": HOSTS,
        "link_mbit": LINK_MBIT,
    }
    if not was_running:
        stop = subprocess.run(
            ["bash", str(REPO / "scripts" / "local-slurm-stop.sh")],
            capture_output=True,
            text=True,
            timeout=180,
        )
        assert stop.returncode == 0, f"local-slurm-stop.sh failed:\n{stop.stderr}"
        assert_nothing_left_behind()


def assert_nothing_left_behind() -> None:
    """The stop script removes every namespace, link, daemon and host name the start made."""
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    links = subprocess.run(["ip", "-br", "link"], capture_output=True, text=True).stdout
    assert not any(host in netns for host in HOSTS), netns
    assert "dlperf" not in links, links
    assert not any(host in Path("/etc/hosts").read_text() for host in HOSTS)
    assert not running("slurmd") and not running("slurmctld")


def running(comm: str) -> list[str]:
    """PIDs of live processes named ``comm`` (an exited daemon may stay a zombie until PID 1
    reaps it: that one is gone)."""
    pids = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            name = (proc / "comm").read_text().strip()
            state = (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if name == comm and state not in ("Z", "X"):
            pids.append(proc.name)
    return pids
