"""Strict references mode, shared by tests/ and bench/.

Most cross-checks compare mirkit with a peer library (pytrec_eval, torch, OpenCV, faiss, ...) or
with the real data in ``../shared/data``. On a user's machine a missing reference skips the tests
that need it, each with one stated reason (``pytest -rs`` lists them, grouped). In CI
(``MIRKIT_REQUIRE_REFERENCES=1``, set by ``.ci/run``) nothing may be missing: every package of the
test extra must be installed and the shared data present before any test runs, and any skip at all
is reported as a failure naming its reason, so a green run means every cross-check ran.
"""

import os

import pytest

STRICT_VARIABLE = "MIRKIT_REQUIRE_REFERENCES"


def strict_mode() -> bool:
    return os.environ.get(STRICT_VARIABLE, "").strip() not in ("", "0")


def _missing_test_requirements() -> list:
    """The requirements of mirkit's test extra (from the installed metadata) not installed here."""
    from importlib import metadata

    from packaging.requirements import Requirement

    try:
        requires = metadata.requires("mirkit") or []
    except metadata.PackageNotFoundError:
        return ["mirkit itself (not installed: run `pip install \".[test]\"`)"]
    missing = []
    for line in requires:
        req = Requirement(line)
        if req.marker is None or not req.marker.evaluate({"extra": "test"}):
            continue  # not in the test extra, or not for this platform
        if req.name == "mirkit":
            continue  # the test extra may name other extras of mirkit itself
        wanted = f"{req.name}{req.specifier}"
        try:
            version = metadata.version(req.name)
        except metadata.PackageNotFoundError:
            missing.append(f"{wanted} (not installed)")
            continue
        if not req.specifier.contains(version, prereleases=True):
            missing.append(f"{wanted} (found {version})")
    return missing


def pytest_report_header(config):
    if strict_mode():
        return (f"mirkit: strict references mode ({STRICT_VARIABLE}=1): every reference and "
                "../shared/data are required; a skip is a failure")
    return (f"mirkit: references optional: tests whose reference package or ../shared/data is "
            f"missing skip with the reason ({STRICT_VARIABLE}=1 makes that a failure)")


def pytest_sessionstart(session):
    if not strict_mode():
        return
    from mirkit.benchmarks.data import data_dir

    problems = [f"test extra: {m}" for m in _missing_test_requirements()]
    if data_dir() is None:
        problems.append("../shared/data: not found (set MIRKIT_DATA to its path)")
    if problems:
        raise pytest.UsageError(
            f"strict references mode ({STRICT_VARIABLE}=1) needs what is missing here:\n  "
            + "\n  ".join(problems))


def _strict_failure(report):
    """Turn a skip report into a failure that names the skip's reason."""
    if not (strict_mode() and report.skipped) or hasattr(report, "wasxfail"):
        return
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    where = f"{longrepr[0]}:{longrepr[1]}: " if isinstance(longrepr, tuple) else ""
    report.outcome = "failed"
    report.longrepr = (f"strict references mode ({STRICT_VARIABLE}=1) forbids skips: "
                       f"{where}{reason}")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    _strict_failure(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    _strict_failure(outcome.get_result())


def pytest_terminal_summary(terminalreporter):
    """One line per distinct skip reason, with its count, whatever test or file it came from;
    in strict mode, a closing line saying so."""
    import re
    from collections import Counter

    if strict_mode():
        terminalreporter.write_line(f"mirkit: strict references mode was on ({STRICT_VARIABLE}=1):"
                                    " every reference and ../shared/data were required")

    reasons = Counter()
    for report in terminalreporter.stats.get("skipped", []):
        longrepr = report.longrepr
        reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
        reasons[re.sub(r"^Skipped: ", "", reason)] += 1
    if reasons:
        terminalreporter.section("skips by reason")
        for reason, n in reasons.most_common():
            terminalreporter.line(f"{n:6d}  {reason}")
