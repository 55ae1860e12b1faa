import json
import os

import pytest

from ibcheck.simulate import load_run

SMALL = ["train", "--setting", "fa", "--d", "64", "--k", "4", "--n", "60", "--m", "3", "--seeds", "2", "--steps", "200",
         "--lr", "0.5", "--init-scale", "0.1", "--quiet"]


def test_train_json_contract_and_run_directory(cli, tmp_path):
    out = tmp_path / "run"
    res = cli(*SMALL, "--out", str(out), "--json", check_rc=0)
    summary = json.loads(res.stdout)
    assert summary["setting"] == "fa" and "config" in summary
    assert [s["seed"] for s in summary["seeds"]] == [0, 1]
    for s in summary["seeds"]:
        for key in ("seed", "train_log10_loss", "test_accuracy", "normalized_margin", "smoothed_margin",
                    "cosine_same_class_mean", "cosine_other_class_mean", "lambda_within_class_ratio"):
            assert key in s
        assert s["test_accuracy"] > 0.95
    assert {"config.json", "summary.json", "metrics.csv", "trajectory.csv", "weights.npz", "networks.json", "cosine_matrix.png"} <= set(os.listdir(out))
    run = load_run(str(out))
    assert run.config.setting == "fa" and run.config.data.d == 64
    data = run.dataset()
    for net, s in zip(run.networks, run.seeds):
        assert net.degree == 1 and net.kind == "fa"
        from ibcheck.solvers.networks import normalized_margin
        assert normalized_margin(net, data.X, data.y) == pytest.approx(s["normalized_margin"], rel=1e-9)
    steps = sorted({r["step"] for r in run.trajectory})
    assert steps[0] == 0 and steps[-1] == 200


@pytest.mark.parametrize("extra, word", [
    (["--d", "0"], "--d 0 is out of range"),
    (["--n", "-3"], "--n -3 is out of range"),
    (["--m", "0"], "--m 0 is out of range"),
    (["--k", "100"], "orthogonal means need k <= d=64"),
    (["--init-scale", "0"], "--init-scale 0 is out of range: must be a finite number > 0"),
    (["--init-scale", "-1"], "--init-scale -1 is out of range: must be a finite number > 0"),
    (["--lr", "-1"], "--lr -1 is out of range: must be a finite number > 0"),
    (["--device", "tpu"], "is not one of cpu, cuda"),
])
def test_bad_input_one_line_and_nothing_written(cli, tmp_path, extra, word):
    out = tmp_path / "run"
    args = list(SMALL)
    for i in range(0, len(extra), 2):
        if extra[i] in args:
            j = args.index(extra[i])
            args[j + 1] = extra[i + 1]
        else:
            args += extra[i:i + 2]
    res = cli(*args, "--out", str(out))
    assert res.returncode == 2, res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr
    assert word in res.stderr
    assert not out.exists()


def test_unwritable_or_occupied_out(cli, tmp_path):
    f = tmp_path / "afile"
    f.write_text("x")
    res = cli(*SMALL, "--out", str(f / "run"))
    assert res.returncode == 2 and f"{f} is not a directory" in res.stderr
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "keep.txt").write_text("mine")
    res = cli(*SMALL, "--out", str(busy))
    assert res.returncode == 2 and "not empty" in res.stderr
    assert os.listdir(busy) == ["keep.txt"]


def test_divergent_run_is_recorded(cli, tmp_path):
    out = tmp_path / "div"
    res = cli("train", "--setting", "two-layer", "--d", "20", "--n", "30", "--m", "10", "--steps", "30", "--lr", "1e8",
              "--loss", "exp", "--reduction", "sum", "--init-scale", "3", "--quiet", "--out", str(out), "--json", check_rc=0)
    statuses = [s["status"] for s in json.loads(res.stdout)["seeds"]]
    assert statuses == ["diverged"]
    assert load_run(str(out)).seeds[0]["status"] == "diverged"


def test_other_settings_run(cli, tmp_path):
    for i, args in enumerate([
        ["--setting", "multiclass", "--d", "64", "--k", "3", "--n", "60", "--m", "2", "--steps", "100"],
        ["--setting", "linear", "--d", "10", "--n", "40", "--steps", "100"],
        ["--setting", "random-net", "--d", "50", "--m", "30", "--activation", "tanh"],
        ["--setting", "fa", "--data", "digits", "--n", "300", "--steps", "50"],
        ["--setting", "two-layer", "--data", "sphere", "--d", "30", "--n", "20", "--m", "10", "--steps", "100", "--no-bias"],
    ]):
        out = tmp_path / f"r{i}"
        res = cli("train", *args, "--quiet", "--out", str(out), "--json", check_rc=0)
        summary = json.loads(res.stdout)
        run = load_run(str(out))
        assert len(run.networks) == len(summary["seeds"]) == 1


def test_an_out_path_through_a_missing_folder_and_dotdot_is_refused_and_nothing_made(cli, tmp_path):
    """``nosuch/../../x/deeper/f.py``: the system cannot follow '..' after a folder that does not exist, while a lexical
    reading drops both. The check once read it lexically and made the folders there, then the write failed at the
    real path, naming a temp file and leaving the folders behind. Now refused first: one line, nothing made."""
    base = tmp_path / "a"
    base.mkdir()
    for args in (["new-claim", "ABC25.thm.1", "--out", f"{base}/nosuch/../../esc/deeper/x.py"],
                 ["compare", "LPLL25.thm.nonrobust", "--quick", "--out", f"{base}/nosuch/../../esc2/cmp"],
                 [*SMALL, "--out", f"{base}/nosuch/../../esc3/run"]):
        res = cli(*args)
        assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr, res.stderr
        assert f"{base}/nosuch does not exist, so the '..' after it cannot be followed" in res.stderr
        assert ".tmp" not in res.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a"] and not any(base.iterdir())
    ok = cli("new-claim", "ABC25.thm.1", "--out", f"{base}/../a/x.py")  # '..' after a folder that exists: followed
    assert ok.returncode == 0 and (base / "x.py").exists()
