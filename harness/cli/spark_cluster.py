"""`window-harness spark-cluster`: a throwaway standalone Spark cluster on this
machine (one master, N workers), up until Ctrl-C, for `fuzz --on-spark
--spark-master URL` (`harness.engines.spark.standalone`)."""

from __future__ import annotations

import argparse
import signal
import sys

from harness.cli.exit_codes import EXIT_PASS
from harness.cli.options import memory_amount, positive_int


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "spark-cluster",
        help="start a local standalone Spark cluster (a master and workers) until Ctrl-C",
        description="Start a standalone Spark master and workers on 127.0.0.1 with pyspark's own "
        "Spark, wait until every worker has registered, print the master's URL (the first line of "
        "stdout) and keep the cluster up until Ctrl-C or SIGTERM; then stop every daemon and "
        "executor. Point a campaign at it from the same environment: `window-harness fuzz "
        "--on-spark --spark-master URL ...`.")
    p.add_argument("--workers", type=positive_int, default=2, help="how many workers (default: 2)")
    p.add_argument("--cores", type=positive_int, default=1,
                   help="cores each worker offers to executors (default: 1)")
    p.add_argument("--memory", type=memory_amount, default="1g",
                   help="memory each worker offers to executors (default: 1g, what one executor takes)")
    p.set_defaults(command=cmd_spark_cluster)


def cmd_spark_cluster(args: argparse.Namespace) -> int:
    from harness.engines.spark.standalone import LocalCluster

    # SIGTERM leaves the `with` as Ctrl-C does: the cluster is stopped either way.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(EXIT_PASS))
    print(f"spark-cluster: starting a master and {args.workers} worker(s) "
          f"({args.cores} core(s), {args.memory} each)", file=sys.stderr, flush=True)
    try:
        with LocalCluster(args.workers, args.cores, args.memory) as cluster:
            print(cluster.url, flush=True)
            print(f"spark-cluster: up; the master's web UI is {cluster.web_url}; logs under "
                  f"{cluster.directory}\n  window-harness fuzz --on-spark --spark-master {cluster.url} ...\n"
                  "spark-cluster: Ctrl-C stops it", file=sys.stderr, flush=True)
            while True:
                signal.pause()
    except KeyboardInterrupt:
        print("spark-cluster: stopped", file=sys.stderr)
    return EXIT_PASS
