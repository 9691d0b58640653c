"""What the Spark adapter and a local Spark Connect server share: the JVM's
launch settings and log configuration, the Java check, and reading a Spark
error as one short line.

Below both `adapter.py` and `connect.py`, which import each other's
services otherwise.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import tempfile

from harness.core.errors import EngineUnavailable

# Only for a JVM the harness launches: its own, or a local Connect server (not a remote one).
LAUNCH_CONF = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",  # the [Stage 0:> ...] bar on stderr
}
# The driver listens on loopback only, unless its executors are elsewhere.
LOOPBACK_DRIVER = {"spark.driver.bindAddress": "127.0.0.1", "spark.driver.host": "127.0.0.1"}
_LOOPBACK_MASTER = re.compile(r"local(\[.*\])?|spark://(127\.0\.0\.1|localhost)(:\d+)?", re.IGNORECASE)


def launch_conf(master: str) -> dict[str, str]:
    """LAUNCH_CONF for a driver whose master is `master`. With local[...] or a
    standalone master on this machine (`window-harness spark-cluster`), the
    driver listens on 127.0.0.1 only; with a master elsewhere (spark://HOST,
    yarn, k8s://...) executors on other hosts must reach it, so Spark's own
    choice applies (this host's address; SPARK_LOCAL_IP or spark.driver.host in
    spark-defaults.conf override it)."""
    loopback = _LOOPBACK_MASTER.fullmatch(master.strip()) is not None
    return {**LAUNCH_CONF, **(LOOPBACK_DRIVER if loopback else {})}

# Silences the JVM: a root logger with an appender (else Spark loads its own
# defaults) at level off, and a level of its own for the logger of the class
# that initialises logging in a pyspark driver (else Spark prints "Setting
# default log level to WARN" whenever that level differs from the root's).
_LOG4J2 = """\
rootLogger.level = off
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n
logger.gateway.name = org.apache.spark.api.python.PythonGatewayServer
logger.gateway.level = off
"""


def scratch_conf() -> dict[str, str]:
    """The warehouse and local directories of a JVM this process launches: a
    fresh temporary directory, removed at exit. Spark's defaults are
    `spark-warehouse` under the working directory and /tmp, which two Sparks
    on one machine (an A/B of two releases: each labelled one is a child
    process with a JVM of its own) would share."""
    root = tempfile.mkdtemp(prefix="window-harness-spark-")
    atexit.register(shutil.rmtree, root, True)
    return {"spark.sql.warehouse.dir": os.path.join(root, "warehouse"),
            "spark.local.dir": os.path.join(root, "local")}


# The JVM the harness launches lives for one command and answers many small
# queries: most of its CPU went to the C2 compiler compiling Spark's planner
# (the corpus on Spark took 87 CPU-seconds on two cores with the JVM's defaults,
# 45 with these, and 46 s of wall time against 27). Neither the compiler nor the
# collector changes a result: floating point is strict in Java 17 whichever
# compiler runs the code (JEP 306). WINDOW_HARNESS_SPARK_JAVA_OPTIONS replaces
# them (empty: the JVM's defaults, for a campaign of hours on many cores).
JAVA_OPTIONS_ENV = "WINDOW_HARNESS_SPARK_JAVA_OPTIONS"
QUICK_JVM = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"


def driver_java_options() -> str:
    """spark.driver.extraJavaOptions of a JVM the harness launches: its log
    configuration, and QUICK_JVM unless the environment says otherwise."""
    return f"-Dlog4j2.configurationFile=file:{log4j_file()} {os.environ.get(JAVA_OPTIONS_ENV, QUICK_JVM)}".strip()


def log4j_file() -> str:
    fd, path = tempfile.mkstemp(prefix="window-harness-log4j2-", suffix=".properties")
    with os.fdopen(fd, "w") as f:
        f.write(_LOG4J2)
    atexit.register(os.remove, path)
    return path


def require_java() -> None:
    """EngineUnavailable unless a JVM can be launched (here or for a local Connect server)."""
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        raise EngineUnavailable("spark", "no Java: `java` is not on PATH and JAVA_HOME is unset")


_LOCATION = re.compile(r"\s*(;\s*line \d+ pos \d+;?|\(line \d+, pos \d+\))")
# A Spark Connect transport error is a gRPC call's repr: "<_InactiveRpcError of
# RPC that terminated with: / status = StatusCode.UNAVAILABLE / details = "...">".
_GRPC_DETAILS = re.compile(r'^\s*details = "(.*)"\s*$', re.MULTILINE)


def short_message(error: BaseException) -> str:
    """The first line of a Spark error, with its error class and without the
    query position, the '== SQL ==' excerpt, the plan or the JVM stack trace:
    for messages about the session (it did not start, its server is gone)."""
    rpc = _GRPC_DETAILS.search(str(error))
    if rpc and str(error).lstrip().startswith("<_"):
        return rpc.group(1)
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    # A Py4JJavaError reads "An error occurred while calling o33.sql. / : <java exception>".
    java = [line[2:] for line in lines if line.startswith(": ")]
    text = _LOCATION.sub("", (java or lines or [type(error).__name__])[0])
    # getCondition since pyspark 4.0; getErrorClass before (3.4, 3.5).
    condition = getattr(error, "getCondition", getattr(error, "getErrorClass", lambda: None))()
    if condition and f"[{condition}]" not in text:
        text = f"[{condition}] {text}"
    return text


_STACK = re.compile(r"^\s*(at [\w$.<>]+\(|JVM stacktrace:|\.\.\. \d+ more)")


def error_message(error: BaseException) -> str:
    """A query's error whole: `short_message`'s line, then the '== SQL ==' excerpt
    with its caret where Spark gives one, up to the JVM stack trace. The analyzed
    plan Spark appends is left out: its expression ids (`v#2L`) change from run
    to run, and it repeats the query."""
    first = short_message(error)
    if str(error).lstrip().startswith("<_"):  # a gRPC call's repr: its details are all
        return first
    raw = [line.rstrip() for line in str(error).splitlines() if line.strip()]
    start = next((i for i, line in enumerate(raw) if line.lstrip().startswith("== SQL")), None)
    if start is None:
        return first
    rest = []
    for line in raw[start:]:
        if _STACK.match(line):
            break
        rest.append(line)
    return "\n".join([first, *rest])
