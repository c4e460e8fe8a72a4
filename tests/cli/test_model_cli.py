"""`pmlab run --model / --emulate` as a user calls them: bad devices are one-line errors, nothing is written."""
import json


def _one_line_error(proc):
    lines = proc.stderr.strip().splitlines()
    return len(lines) == 1 and lines[0].startswith("pmlab: error:")


def test_unknown_device_exits_2_and_names_the_presets(pmlab, shm_dir):
    proc = pmlab("run", "model.rmw", "--model", "optane9000", "--out", shm_dir / "o")
    assert proc.returncode == 2 and _one_line_error(proc)
    assert "optane9000" in proc.stderr and "dcpmm" in proc.stderr
    assert not (shm_dir / "o").exists()


def test_missing_device_file_exits_3(pmlab, shm_dir):
    proc = pmlab("run", "model.rmw", "--emulate", shm_dir / "nope.json", "--out", shm_dir / "o")
    assert proc.returncode == 3 and _one_line_error(proc)


def test_bad_device_file_names_the_parameter(pmlab, shm_dir):
    bad = shm_dir / "bad.json"
    bad.write_text('{"base": "dcpmm", "media_line_bytes": 100}')
    before = bad.read_bytes()
    proc = pmlab("run", "model.rmw", "--model", bad, "--out", shm_dir / "o")
    assert proc.returncode == 2 and _one_line_error(proc)
    assert "media_line_bytes" in proc.stderr
    assert bad.read_bytes() == before


def test_a_device_file_is_recorded_in_the_context(pmlab, shm_dir):
    device = shm_dir / "slow-dimms.json"
    device.write_text('{"base": "c3", "media_write_gbps": 1.0}')
    pmlab("run", "model.rmw", "--quick", "--model", device, "--out", shm_dir / "o", "--no-progress", check=True)
    doc = json.loads((shm_dir / "o" / "results.json").read_text())
    assert doc["context"]["model"]["name"] == "slow-dimms"
    assert doc["context"]["model"]["parameters"]["media_write_gbps"] == 1.0
    assert doc["context"]["model"]["parameters"]["write_buffer_lines"] == 0  # from base c3


def _media_writes(doc):
    return {r["params"].get("cost", r["params"].get("breakdown")): (r["metrics"].get("media_write_bytes") or {}).get("value", 0)
            for r in doc["runs"] if r["status"] == "ok"}


def test_ptm_and_ds_writes_reach_the_device_model(pmlab, shm_dir):
    """The PTMs and the structures' breakdowns run on persisters derived from the run's: the model sees them."""
    pmlab("run", "ptm.breakdown", "--quick", "--model", "dcpmm", "--set", "ptm=redo", "--set", "workload=sps-16",
          "--set", "cost=full,no-flush", "--out", shm_dir / "ptm", "--no-progress", check=True)
    ptm = _media_writes(json.loads((shm_dir / "ptm" / "results.json").read_text()))
    assert ptm["full"] > 0, ptm        # flushed lines reach the model
    assert ptm["no-flush"] == 0, ptm   # and without flushes there are none
    pmlab("run", "ds.ycsb", "--quick", "--model", "dcpmm", "--set", "structure=hashtable", "--set", "mode=persist",
          "--set", "breakdown=none,no-fence", "--set", "medium=pool", "--set", "workload=write-only",
          "--out", shm_dir / "ds", "--no-progress", check=True)
    ds = _media_writes(json.loads((shm_dir / "ds" / "results.json").read_text()))
    assert ds["none"] > 0 and ds["no-fence"] > 0, ds  # the no-fence run's persister is derived


def _published_metrics(doc):
    return [name for r in doc["runs"] for name, m in r["metrics"].items() if m["kind"] == "published"]


def test_published_data_is_found_in_the_repository(pmlab, shm_dir):
    env = {"PMLAB_REFERENCE_DIR": ""}  # unset in effect: the data the repository carries
    proc = pmlab("run", "model.xpbuffer", "--quick", "--no-progress", "--out", shm_dir / "o", env=env)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((shm_dir / "o" / "results.json").read_text())
    data = doc["context"]["reference_data"]
    assert data["found_by"] == "source tree" and data["directory"].endswith("data/reference")
    assert data["missing"] == [] and "warning" not in proc.stderr
    assert _published_metrics(doc)


def test_missing_published_data_is_a_warning_and_a_report_line(pmlab, shm_dir):
    env = {"PMLAB_REFERENCE_DIR": str(shm_dir / "nowhere")}
    proc = pmlab("run", "model.xpbuffer", "--quick", "--no-progress", "--out", shm_dir / "o", env=env)
    assert proc.returncode == 0, proc.stderr
    assert "pmlab: warning: published data optane-study/09-infer_xpbuffer.csv not found" in proc.stderr
    doc = json.loads((shm_dir / "o" / "results.json").read_text())
    assert {"file": "optane-study/09-infer_xpbuffer.csv", "reason": "not found"} in doc["context"]["reference_data"]["missing"]
    assert not _published_metrics(doc)
    assert pmlab("report", shm_dir / "o").returncode == 0
    html = (shm_dir / "o" / "report.html").read_text()
    assert "Published comparisons missing" in html and "09-infer_xpbuffer.csv" in html
