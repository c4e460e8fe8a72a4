"""pmlab compare: matching, the U test, verdicts by unit, exit codes."""

from __future__ import annotations

import json
import math
import pathlib

import pytest

from pmlab_report import compare


def test_exact_u_test_matches_hand_counts():
    # Completely separated samples: only the two extreme splits of C(6,3)=20 are as far -> p = 2/20.
    assert compare.mann_whitney_p([1, 2, 3], [4, 5, 6]) == pytest.approx(0.1)
    assert compare.mann_whitney_p([1, 2, 3, 4, 5], [6, 7, 8, 9, 10]) == pytest.approx(2 / 252)
    assert compare.mann_whitney_p([1, 2, 3], [1, 2, 3]) == pytest.approx(1.0)


def test_many_repetitions_stay_cheap():
    # 10 against 10 would be 184,756 splits per metric: the normal approximation takes over.
    a = [float(x) for x in range(10)]
    b = [x + 100 for x in a]
    p = compare.mann_whitney_p(a, b)
    assert 0 < p < 0.001


def test_normal_approximation_for_large_samples():
    a = list(range(20))
    b = [x + 20 for x in a]
    z = (200 - 0.5) / math.sqrt(20 * 20 * 41 / 12)
    assert compare.mann_whitney_p(a, b) == pytest.approx(math.erfc(z / math.sqrt(2)))
    assert compare.mann_whitney_p(a, a) > 0.9


def test_direction_follows_the_unit():
    assert compare.better_when("ops/s") == "higher"
    assert compare.better_when("MiB/s") == "higher"
    assert compare.better_when("ns") == "lower"
    assert compare.better_when("count") is None


FIXTURE = pathlib.Path(__file__).parent / "fixtures" / "core_partial.json"


def _doc(runs):
    doc = json.loads(FIXTURE.read_text())  # a valid context, as pmlab writes it
    doc["runs"] = runs
    return doc


def _run(name, throughput, latency, fences=2.0):
    return {"name": name, "suite": "s", "case": "c", "params": {}, "config_hash": "h", "status": "ok", "reason": None,
            "metrics": {"throughput": {"value": throughput, "unit": "ops/s", "kind": "measured"},
                        "latency_p50": {"value": latency, "unit": "ns", "kind": "measured"},
                        "fences_per_op": {"value": fences, "unit": "count", "kind": "measured"}}}


def _side(tmp_path, label, values):
    root = tmp_path / label
    for i, (thr, lat) in enumerate(values):
        d = root / f"rep{i}"
        d.mkdir(parents=True)
        (d / "results.json").write_text(json.dumps(_doc([_run("s.c/x:1", thr, lat)])))
    return str(root)


def test_a_significant_slowdown_fails_and_noise_does_not(tmp_path, capsys):
    base = _side(tmp_path, "a", [(100, 50), (102, 51), (99, 49), (101, 50), (100, 52)])
    same = _side(tmp_path, "b", [(101, 50), (99, 51), (100, 50), (102, 49), (100, 51)])
    slow = _side(tmp_path, "c", [(80, 60), (81, 61), (79, 62), (80, 60), (82, 61)])
    assert compare.main([base, same]) == compare.EXIT_OK
    assert compare.main([base, slow]) == compare.EXIT_REGRESSION
    out = capsys.readouterr().out
    assert "s.c/x:1 throughput" in out and "worse" in out and "-20.0%" in out
    # Faster is better, not a regression.
    assert compare.main([slow, base]) == compare.EXIT_OK


def test_one_sample_is_never_called_significant(tmp_path, capsys):
    a = _side(tmp_path, "a", [(100, 50)])
    b = _side(tmp_path, "b", [(50, 100)])
    assert compare.main([a, b]) == compare.EXIT_OK
    out = capsys.readouterr().out
    assert "1 sample" in out and "unclear" in out


def test_runs_and_metrics_on_one_side_only_are_named(tmp_path, capsys):
    a = tmp_path / "a"
    b = tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "results.json").write_text(json.dumps(_doc([_run("s.c/x:1", 1, 1), _run("s.c/x:2", 1, 1)])))
    (b / "results.json").write_text(json.dumps(_doc([_run("s.c/x:1", 1, 1)])))
    compare.main([str(a), str(b), "--html", str(tmp_path / "cmp.html")])
    out = capsys.readouterr().out
    assert "1 runs only in A (e.g. s.c/x:2)" in out
    assert "<table>" in (tmp_path / "cmp.html").read_text()


def test_bad_input_is_a_clear_error(tmp_path, capsys):
    assert compare.main([str(tmp_path / "nothing"), str(tmp_path)]) == compare.EXIT_INPUT
    assert "no such directory" in capsys.readouterr().err


def test_html_overlays_the_significant_changes(tmp_path):
    base = _side(tmp_path, "a", [(100, 50), (102, 51), (99, 49), (101, 50), (100, 52)])
    slow = _side(tmp_path, "c", [(80, 60), (81, 61), (79, 62), (80, 60), (82, 61)])
    page = tmp_path / "cmp.html"
    assert compare.main([base, slow, "--html", str(page)]) == compare.EXIT_REGRESSION
    text = page.read_text()
    assert text.count('<img alt="suite s" src="data:image/png;base64,') == 1
    assert "2 significant change(s)" in text  # throughput worse, latency worse
    same = _side(tmp_path, "b", [(101, 50), (99, 51), (100, 50), (102, 49), (100, 51)])
    compare.main([base, same, "--html", str(page)])
    text = page.read_text()
    assert "<img" not in text and "No metric changed significantly" in text


def _judged(name, verdict, threshold=1.5):
    run = _run(name, 100, 50)
    run["metrics"]["ratio"] = {"value": 2.0 if verdict == "met" else 1.0, "unit": "ratio", "kind": "measured"}
    run["targets"] = [{"metric": "ratio", "label": "ours vs the peer", "threshold": threshold,
                       "direction": "at_least", "value": run["metrics"]["ratio"]["value"], "verdict": verdict}]
    return run


def test_verdicts_are_compared_and_a_flip_is_named(tmp_path, capsys):
    for side, verdicts in (("a", ("met", "missed")), ("b", ("met", "met"))):
        d = tmp_path / side
        d.mkdir()
        (d / "results.json").write_text(json.dumps(_doc([_judged("s.c/x:1", verdicts[0]),
                                                         _judged("s.c/x:2", verdicts[1])])))
    compare.main([str(tmp_path / "a"), str(tmp_path / "b")])
    out = capsys.readouterr().out
    assert "verdict changed: s.c/x:2 target ratio at_least 1.5: missed -> met" in out
    assert "s.c/x:1 target" not in out  # unchanged verdicts are listed only with --all
    assert "2 verdicts compared: 1 changed" in out
