"""Load and validate `results.json` (docs/results-schema.md).

The validator is hand-written: it walks the document and returns a list of
problems, each prefixed with the path of the offending object, e.g.
``runs[3].metrics.throughput: kind must be measured, modelled or published``.
Unknown keys are allowed (the schema may grow without a version bump); missing
or mistyped documented keys are not.
"""

from __future__ import annotations

import json
import math
import os
import stat
from typing import Any

from . import migrate

SUPPORTED_VERSIONS = (1, 2, 3)  # 1 and 2 are read through migrate.upgrade

KINDS = ("measured", "modelled", "published")
STATUSES = ("ok", "error", "skipped")
DOMAINS = ("none", "adr", "eadr")
FLUSHES = ("clflush", "clflushopt", "clwb", "ntstore")
POOL_MEDIA = ("pmem", "emulated")
STATS_OVER = ("repetitions", "rounds")
TARGET_DIRECTIONS = ("at_least", "at_most")
TARGET_VERDICTS = ("met", "missed", "unclear")
CHECK_KINDS = ("plausibility", "cross-check")
CHECK_VERDICTS = ("ok", "violated", "not_applicable")


class ResultsError(Exception):
    """results.json is missing, unreadable or invalid; `problems` lists every problem found."""

    def __init__(self, problems: list[str]):
        super().__init__(problems[0] if problems else "invalid results")
        self.problems = list(problems)

    def summary(self) -> str:
        """One line: the first problem, plus how many more there are."""
        first = self.problems[0] if self.problems else "invalid results"
        more = len(self.problems) - 1
        if more > 0:
            return f"{first} (and {more} more problem{'s' if more > 1 else ''})"
        return first


# --------------------------------------------------------------------------- load


def _reject_constant(name: str):
    raise ValueError(f"{name} is not valid JSON (use null for a missing value)")


def parse(text: str, origin: str = "results.json") -> Any:
    """Parse JSON text; raise ResultsError saying where it is malformed."""
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise ResultsError(
            [f"{origin} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"]
        ) from None
    except (ValueError, RecursionError) as exc:
        raise ResultsError([f"{origin} is not valid JSON: {exc}"]) from None


MAX_BYTES = 256 << 20  # far above any run's results; a bigger file is not one


def read_regular_file(path, what: str = "results file") -> bytes:
    """The bytes of PATH, which must be a regular file: a FIFO or a device is refused without
    blocking (opened O_NONBLOCK, checked with fstat), a directory is refused too."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except OSError as exc:
        raise ResultsError([f"cannot read {path}: {exc.strerror or exc}"]) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ResultsError([f"cannot read {path}: it is not a regular file"])
        if info.st_size > MAX_BYTES:
            raise ResultsError([f"{path} is too large for a {what} ({info.st_size} bytes)"])
        os.set_blocking(fd, True)
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise ResultsError([f"cannot read {path}: {exc.strerror or exc}"]) from None
    finally:
        os.close(fd)


def decode(raw: bytes, origin: str = "results.json") -> Any:
    """Parse the bytes of a results file (no validation)."""
    try:
        text = raw.decode("utf-8-sig")  # tolerate a byte-order mark
    except UnicodeDecodeError as exc:
        raise ResultsError([f"{origin} is not UTF-8 text: {exc.reason} at byte {exc.start}"]) from None
    return parse(text, origin)


def read(path) -> Any:
    """Read and parse a results file (no validation)."""
    return decode(read_regular_file(path), str(path))


def load(path) -> dict:
    """Read, parse and validate; return the document in the current version (migrate.upgrade) or raise
    ResultsError."""
    doc = read(path)
    problems = validate(doc)
    if problems:
        raise ResultsError(problems)
    return migrate.upgrade(doc)


# --------------------------------------------------------------------------- validate


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, float) and not math.isfinite(value):
        # JSON has no infinity: Python reads a number too large for a double (1e400) as one.
        return "a number too large for a double"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


_CHECKS = {
    "string": (lambda v: isinstance(v, str), "a string"),
    "nonempty": (lambda v: isinstance(v, str) and v != "", "a non-empty string"),
    "bool": (lambda v: isinstance(v, bool), "a boolean"),
    "int": (_is_int, "an integer"),
    "number": (_is_number, "a number"),
    "object": (lambda v: isinstance(v, dict), "an object"),
    "array": (lambda v: isinstance(v, list), "an array"),
}


class _Checker:
    """Collects problems while walking the document."""

    def __init__(self):
        self.problems: list[str] = []

    def add(self, path: str, message: str) -> None:
        self.problems.append(f"{path}: {message}" if path else message)

    def field(self, obj: dict, path: str, key: str, kind: str, *, nullable=False, required=True,
              choices: tuple | None = None) -> bool:
        """Check obj[key]; return True when it is present, non-null and well-typed."""
        if key not in obj:
            if required:
                self.add(path, f"missing {key}")
            return False
        value = obj[key]
        if value is None:
            if not nullable:
                self.add(path, f"{key} must not be null")
            return False
        test, expected = _CHECKS[kind]
        if not test(value):
            self.add(path, f"{key} must be {expected} (got {_type_name(value)})")
            return False
        if choices is not None and value not in choices:
            self.add(path, f"{key} must be {_one_of(choices)} (got {value!r})")
            return False
        return True


def _one_of(choices: tuple) -> str:
    if len(choices) == 1:
        return choices[0]
    return ", ".join(choices[:-1]) + " or " + choices[-1]


def validate(doc: Any) -> list[str]:
    """All problems found in `doc` (an empty list means valid)."""
    check = _Checker()
    if not isinstance(doc, dict):
        check.add("", f"top level must be an object (got {_type_name(doc)})")
        return check.problems
    if "schema_version" not in doc:
        check.add("", "missing schema_version")
        return check.problems
    version = doc["schema_version"]
    if not _is_int(version):
        check.add("", f"schema_version must be an integer (got {_type_name(version)})")
        return check.problems
    if version not in SUPPORTED_VERSIONS:
        known = ", ".join(str(v) for v in SUPPORTED_VERSIONS)
        check.add("", f"unsupported schema_version {version} (this reader knows {known})")
        return check.problems

    check.field(doc, "", "pmlab_version", "string")
    if check.field(doc, "", "context", "object"):
        _validate_context(check, doc["context"])
    if check.field(doc, "", "runs", "array"):
        _validate_runs(check, doc["runs"])
    # Optional: plausibility rules and cross-checks between suites, judged by the runner.
    if check.field(doc, "", "checks", "array", required=False):
        _validate_checks(check, doc["checks"])
    return check.problems


def _validate_checks(check: _Checker, checks: list) -> None:
    for i, item in enumerate(checks):
        cp = f"checks[{i}]"
        if not isinstance(item, dict):
            check.add(cp, f"must be an object (got {_type_name(item)})")
            continue
        check.field(item, cp, "kind", "string", choices=CHECK_KINDS)
        check.field(item, cp, "rule", "nonempty")
        check.field(item, cp, "description", "string")
        check.field(item, cp, "verdict", "string", choices=CHECK_VERDICTS)
        check.field(item, cp, "detail", "string", required=False, nullable=True)
        check.field(item, cp, "explained", "string", required=False, nullable=True)
        if check.field(item, cp, "runs", "array", required=False):
            for j, name in enumerate(item["runs"]):
                if not isinstance(name, str):
                    check.add(f"{cp}.runs[{j}]", f"must be a string (got {_type_name(name)})")


def _validate_context(check: _Checker, ctx: dict) -> None:
    p = "context"
    for key in ("run_id", "date", "command_line", "host", "kernel", "git_revision", "config_hash"):
        check.field(ctx, p, key, "string")
    check.field(ctx, p, "quick", "bool")
    # Optional (results written before stop signals were handled have none).
    check.field(ctx, p, "interrupted", "bool", required=False)
    check.field(ctx, p, "numa_nodes", "int")
    check.field(ctx, p, "durability_domain", "string", choices=DOMAINS)
    check.field(ctx, p, "flush_instruction", "string", choices=FLUSHES)

    if check.field(ctx, p, "cpu", "object"):
        _validate_cpu(check, ctx["cpu"], f"{p}.cpu")

    if check.field(ctx, p, "timer", "object"):
        timer = ctx["timer"]
        check.field(timer, f"{p}.timer", "source", "string")
        check.field(timer, f"{p}.timer", "overhead_ns", "number", nullable=True)
        check.field(timer, f"{p}.timer", "resolution_ns", "number", nullable=True)

    if check.field(ctx, p, "hardware_counters", "object"):
        hc = ctx["hardware_counters"]
        check.field(hc, f"{p}.hardware_counters", "available", "bool")
        check.field(hc, f"{p}.hardware_counters", "reason", "string", nullable=True)

    # Optional (results written before counters were read per run have none).
    if isinstance(ctx.get("counters"), dict):
        for key in ("core", "memory_traffic", "pmem_dimms"):
            if check.field(ctx["counters"], f"{p}.counters", key, "object"):
                check.field(ctx["counters"][key], f"{p}.counters.{key}", "available", "bool")
                check.field(ctx["counters"][key], f"{p}.counters.{key}", "reason", "string", nullable=True)

    if check.field(ctx, p, "pool", "object", nullable=True):
        pool, pp = ctx["pool"], f"{p}.pool"
        check.field(pool, pp, "path", "string")
        check.field(pool, pp, "medium", "string", choices=POOL_MEDIA)
        check.field(pool, pp, "filesystem", "string")
        check.field(pool, pp, "size_bytes", "int")
        check.field(pool, pp, "store_granularity", "string")
        # Documents written before repetitions moved through the pool have no placement step.
        check.field(pool, pp, "placement_step_bytes", "int", required=False)

    if check.field(ctx, p, "skipped", "array"):
        for i, item in enumerate(ctx["skipped"]):
            ip = f"{p}.skipped[{i}]"
            if not isinstance(item, dict):
                check.add(ip, f"must be an object (got {_type_name(item)})")
                continue
            check.field(item, ip, "name", "nonempty")
            check.field(item, ip, "reason", "string")


def _validate_cpu(check: _Checker, cpu: dict, p: str) -> None:
    check.field(cpu, p, "vendor", "string")
    check.field(cpu, p, "model", "string")
    check.field(cpu, p, "logical_cpus", "int")
    check.field(cpu, p, "tsc_ghz", "number", nullable=True)
    if check.field(cpu, p, "cores_used", "array"):
        for i, core in enumerate(cpu["cores_used"]):
            if not _is_int(core):
                check.add(f"{p}.cores_used[{i}]", f"must be an integer (got {_type_name(core)})")
    if check.field(cpu, p, "isa", "object"):
        for flag, value in cpu["isa"].items():
            if not isinstance(value, bool):
                check.add(f"{p}.isa", f"{flag} must be a boolean (got {_type_name(value)})")
    if check.field(cpu, p, "caches", "array"):
        for i, cache in enumerate(cpu["caches"]):
            cp = f"{p}.caches[{i}]"
            if not isinstance(cache, dict):
                check.add(cp, f"must be an object (got {_type_name(cache)})")
                continue
            for key in ("level", "size_bytes", "line_bytes", "shared_by"):
                check.field(cache, cp, key, "int")
            check.field(cache, cp, "type", "string")


def _validate_runs(check: _Checker, runs: list) -> None:
    seen: dict[str, int] = {}
    for i, run in enumerate(runs):
        rp = f"runs[{i}]"
        if not isinstance(run, dict):
            check.add(rp, f"must be an object (got {_type_name(run)})")
            continue
        has_name = check.field(run, rp, "name", "nonempty")
        has_suite = check.field(run, rp, "suite", "nonempty")
        has_case = check.field(run, rp, "case", "nonempty")
        has_params = check.field(run, rp, "params", "object")
        check.field(run, rp, "config_hash", "string")
        has_status = check.field(run, rp, "status", "string", choices=STATUSES)

        if has_params:
            for key, value in run["params"].items():
                if value is not None and not isinstance(value, (str, int, float, bool)):
                    check.add(f"{rp}.params", f"{key} must be a string, number, boolean or null "
                                              f"(got {_type_name(value)})")
        if has_name:
            name = run["name"]
            if name in seen:
                check.add(rp, f"name {name!r} duplicates runs[{seen[name]}]")
            else:
                seen[name] = i
            if has_suite and has_case:
                _validate_name(check, rp, name, run["suite"], run["case"],
                               run["params"] if has_params else {})

        not_ok = has_status and run["status"] != "ok"
        if not_ok:
            check.field(run, rp, "reason", "nonempty")
        elif "reason" in run:
            check.field(run, rp, "reason", "string", nullable=True)

        if check.field(run, rp, "metrics", "object", required=not not_ok):
            for metric_name, metric in run["metrics"].items():
                _validate_metric(check, f"{rp}.metrics.{metric_name}", metric)

        if check.field(run, rp, "histogram", "object", required=False, nullable=True):
            _validate_histogram(check, f"{rp}.histogram", run["histogram"])

        if check.field(run, rp, "targets", "array", required=False):
            _validate_targets(check, rp, run["targets"])

        # Derived rows (docs/results-schema.md) carry text in an optional object of strings.
        if check.field(run, rp, "notes", "object", required=False):
            for key, text in run["notes"].items():
                if not isinstance(text, str):
                    check.add(f"{rp}.notes", f"{key} must be a string (got {_type_name(text)})")


def _validate_targets(check: _Checker, rp: str, targets: list) -> None:
    for i, item in enumerate(targets):
        tp = f"{rp}.targets[{i}]"
        if not isinstance(item, dict):
            check.add(tp, f"must be an object (got {_type_name(item)})")
            continue
        check.field(item, tp, "metric", "nonempty")
        check.field(item, tp, "label", "string", required=False)
        check.field(item, tp, "threshold", "number")
        check.field(item, tp, "direction", "string", choices=TARGET_DIRECTIONS)
        check.field(item, tp, "value", "number", nullable=True)
        check.field(item, tp, "ci_low", "number", required=False, nullable=True)
        check.field(item, tp, "ci_high", "number", required=False, nullable=True)
        check.field(item, tp, "verdict", "string", choices=TARGET_VERDICTS)
        check.field(item, tp, "why", "string", required=False, nullable=True)


def _validate_name(check: _Checker, rp: str, name: str, suite: str, case: str, params: dict) -> None:
    prefix = f"{suite}.{case}"
    if not (name == prefix or name.startswith(prefix + "/")):
        check.add(rp, f"name {name!r} must start with '{prefix}' (suite.case)")
        return
    position = len(prefix)
    for key in params:
        found = name.find(f"/{key}:", position)
        if found < 0:
            check.add(rp, f"name {name!r} lacks '/{key}:…' for params.{key} (in parameter order)")
            return
        position = found + len(key) + 2


def _validate_metric(check: _Checker, mp: str, metric: Any) -> None:
    if not isinstance(metric, dict):
        check.add(mp, f"must be an object with value, unit and kind (got {_type_name(metric)})")
        return
    check.field(metric, mp, "value", "number", nullable=True)
    check.field(metric, mp, "unit", "string")
    if "kind" not in metric:
        check.add(mp, f"missing kind (must be {_one_of(KINDS)})")
        return
    kind = metric["kind"]
    if kind not in KINDS:
        check.add(mp, f"kind must be {_one_of(KINDS)} (got {json.dumps(kind)})")
        return
    if kind == "modelled" and not (isinstance(metric.get("model"), str) and metric["model"]):
        check.add(mp, "modelled metric needs model (the model's name)")
    if kind == "published" and not (isinstance(metric.get("source"), str) and metric["source"]):
        check.add(mp, "published metric needs source (where the number comes from)")
    check.field(metric, mp, "at_timer_floor", "bool", required=False)
    if check.field(metric, mp, "stats", "object", required=False, nullable=True):
        _validate_stats(check, f"{mp}.stats", metric["stats"])


def _validate_stats(check: _Checker, sp: str, stats: dict) -> None:
    """Repetitions or rounds behind a metric; its value is then their median."""
    if check.field(stats, sp, "n", "int") and stats["n"] < 1:
        check.add(sp, f"n must be at least 1 (got {stats['n']})")
    if check.field(stats, sp, "samples", "array", required=False):
        for i, v in enumerate(stats["samples"]):
            if not _is_number(v):
                check.add(f"{sp}.samples[{i}]", f"must be a number (got {_type_name(v)})")
    for key in ("median", "min", "max", "ci_low", "ci_high"):
        check.field(stats, sp, key, "number", required=False, nullable=True)
    if check.field(stats, sp, "ci_level", "number", required=False, nullable=True) \
            and not 0 < stats["ci_level"] < 1:
        check.add(sp, f"ci_level must lie between 0 and 1 (got {stats['ci_level']})")
    check.field(stats, sp, "over", "string", required=False, choices=STATS_OVER)


def _validate_histogram(check: _Checker, hp: str, hist: dict) -> None:
    check.field(hist, hp, "unit", "string")
    if not check.field(hist, hp, "buckets", "array"):
        return
    for i, bucket in enumerate(hist["buckets"]):
        ok = (isinstance(bucket, list) and len(bucket) == 2 and _is_number(bucket[0])
              and _is_int(bucket[1]) and bucket[1] >= 0)
        if not ok:
            check.add(f"{hp}.buckets[{i}]", "must be [lower_bound, count] "
                                            "(a number and a non-negative integer)")
