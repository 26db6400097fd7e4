"""``--backend ray``: the same run dir, byte for byte, as ``--backend local`` (docs/scale-out.md).

One local Ray of 2 CPUs serves the whole session (``ray_cluster``); the backend joins it
instead of starting its own. Skipped, saying so, when Ray is not installed
(``pip install 'rnr-sim[ray]'``). Runs on the real engine: Ray's workers import it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import signal
import sys
from pathlib import Path

import pytest
from fake_engine import REAL_ENGINE
from typer.testing import CliRunner

from rnr_sim.cli import app
from rnr_sim.compare import CompareOptions, run_compare
from rnr_sim.errors import InputError
from rnr_sim.runs import execution, manifests, planning, runner
from rnr_sim.runs.execution import part_name

HAVE_RAY = importlib.util.find_spec("ray") is not None
needs_ray = pytest.mark.skipif(
    not (HAVE_RAY and REAL_ENGINE),
    reason="Ray is not installed (pip install 'rnr-sim[ray]')" if not HAVE_RAY
    else "Ray's workers play on the real engine")
REPO = Path(__file__).resolve().parent.parent
SAMPLE = sorted((REPO / "decks").glob("*.txt"))
CHUNK = 37  # games per chunk: several chunks, the last one short


@pytest.fixture(scope="session")
def ray_cluster():
    """A local Ray of 2 CPUs, started once for the session; every backend joins it. The
    suite's only local Ray: every test that plays on Ray is in this file, which ``make
    test``'s workers (``--dist loadfile``) run in one worker, so two Rays never start on
    one machine at once."""
    from rnr_sim.runs.ray_backend import import_ray, init_ray

    ray = import_ray(local=True)
    init_ray(num_cpus=2)
    yield ray
    ray.shutdown()


def run(out: Path, decks, backend: str, **kw) -> runner.RunResult:
    kw.setdefault("games", 20)
    kw.setdefault("chunk_size", CHUNK)
    return runner.start_run(planning.RunOptions(decks=decks, out=out, seed=5, backend=backend,
                                              **kw), progress=False, log=lambda m: None)


def hashes(run_dir: Path) -> dict[str, str]:
    """SHA-256 of every parquet file of a run dir (parts, decks, cards), by relative path."""
    return {str(p.relative_to(run_dir)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(run_dir.rglob("*.parquet"))}


def stable(manifest: dict) -> dict:
    """A manifest without what differs between two runs of the same games: times, dates,
    the backend."""
    return {k: v for k, v in manifest.items()
            if k not in ("created", "timings", "execution", "resumed")}


@pytest.fixture(scope="module")
def local_runs(tmp_path_factory, decks):
    """The reference: the same runs on the local backend, by players."""
    base = tmp_path_factory.mktemp("local")
    return {p: run(base / f"p{p}", decks, "local", players=p) for p in (2, 4)}


@needs_ray
@pytest.mark.parametrize("players", [2, 4])
def test_a_ray_run_dir_is_byte_identical_to_a_local_one(ray_cluster, local_runs, decks,
                                                        tmp_path, players):
    local = local_runs[players]
    ray = run(tmp_path / "ray", decks, "ray", players=players)
    assert ray.complete and not ray.interrupted
    assert len(hashes(ray.run_dir)) == 2 * ray.manifest["chunks"]["total"] + 2
    assert hashes(ray.run_dir) == hashes(local.run_dir)
    assert stable(ray.manifest) == stable(local.manifest)
    session = ray.manifest["execution"][-1]
    assert session["backend"] == "ray" and session["workers"] == 2
    assert sorted(map(int, session["chunk_s"])) == list(range(ray.manifest["chunks"]["total"]))
    assert local.manifest["execution"][-1]["backend"] == "local"


@needs_ray
@pytest.mark.parametrize("kind", ["raise", "exit"])
def test_a_chunk_whose_first_attempt_fails_is_retried_to_the_same_run(
        ray_cluster, local_runs, decks, tmp_path, monkeypatch, kind):
    marker = tmp_path / "failed-once"
    # "raise": the task raises (retry_exceptions); "exit": its worker dies (max_retries).
    monkeypatch.setenv("RNR_SIM_RAY_FAULT", f"{kind}:1:{marker}")
    ray = run(tmp_path / "ray", decks, "ray", players=2)
    assert marker.exists()  # the first attempt of chunk 1 did fail
    assert ray.complete
    assert hashes(ray.run_dir) == hashes(local_runs[2].run_dir)


def _stop_once_the_first_chunk_is_under_way(monkeypatch) -> None:
    """Ctrl-C (a real SIGINT to this process) as the second chunk is asked for: the first
    is then under way on either backend, and nothing else is, so the run stops with one
    part whatever order the chunks finish in. (A Ctrl-C after the first part was written
    raced: on Ray the window could hand out every chunk before chunk 0 came back.)"""
    chunk_range = planning.RunPlan.chunk_range
    sent = []

    def interrupt_at_the_second(self, chunk):
        if chunk == 1 and not sent:
            sent.append(chunk)
            os.kill(os.getpid(), signal.SIGINT)
        return chunk_range(self, chunk)

    monkeypatch.setattr(planning.RunPlan, "chunk_range", interrupt_at_the_second)


@needs_ray
@pytest.mark.parametrize(("first", "then"), [("ray", "local"), ("local", "ray")])
def test_a_run_stopped_on_one_backend_resumes_on_the_other(ray_cluster, local_runs, decks,
                                                           tmp_path, monkeypatch, first, then):
    with monkeypatch.context() as mp:
        _stop_once_the_first_chunk_is_under_way(mp)
        stopped = run(tmp_path / "run", decks, first, players=2)
    assert stopped.interrupted and not stopped.complete
    done = stopped.manifest["chunks"]["complete"]
    assert done == list(range(len(done))) and 0 < len(done) < stopped.manifest["chunks"]["total"]
    on_disk = sorted(p.name for p in (stopped.run_dir / "games").glob("part-*.parquet"))
    assert on_disk == [part_name(c) for c in done]  # nothing extra, nothing missing
    resumed = runner.resume_run(stopped.run_dir, progress=False, log=lambda m: None,
                                backend=then)
    assert resumed.complete
    assert hashes(resumed.run_dir) == hashes(local_runs[2].run_dir)
    assert [s["backend"] for s in resumed.manifest["execution"]] == [first, then]


@needs_ray
def test_compare_is_identical_across_backends(ray_cluster, tmp_path):
    patch = tmp_path / "strong.toml"
    patch.write_text('[cards."Minuteman Volley"]\ndamage = 20\ncost = 1\n', encoding="utf-8")
    decks = SAMPLE[:4]
    results = {}
    for backend in ("local", "ray"):
        results[backend] = run_compare(
            CompareOptions(decks=decks, patch=patch, games=30, chunk_size=50, seed=3,
                           out=tmp_path / backend, backend=backend),
            progress=False, log=lambda m: None)
    for side in ("baseline_dir", "variant_dir"):
        a, b = (getattr(results[k], side) for k in ("local", "ray"))
        assert hashes(a) == hashes(b) and len(hashes(a)) > 2
    m = manifests.read_manifest(results["ray"].variant_dir)
    assert m["execution"][0]["backend"] == "ray"


@needs_ray
def test_tune_plays_the_same_games_on_ray(ray_cluster):
    from rnr_sim.tune import tune

    kw = {"budget": 3000, "seed": 4, "holdout_deals": 20}
    local = tune(SAMPLE[0], SAMPLE[1:3], **kw)
    ray = tune(SAMPLE[0], SAMPLE[1:3], backend="ray", **kw)
    for key in ("start_share", "tuned_share", "random_share", "search_share", "gain"):
        assert getattr(ray, key) == getattr(local, key), key
    assert (ray.weights == local.weights).all()


@needs_ray
def test_discover_finds_the_same_archive_on_ray(ray_cluster, tmp_path):
    import polars as pl

    from rnr_sim.discover import DiscoverOptions, discover

    toy = Path(__file__).parent / "fixtures" / "discover"
    for backend in ("local", "ray"):
        discover(DiscoverOptions(field=[toy / "field.txt"], cards=[toy / "toy.toml"],
                                 budget=60_000, seed=3, backend=backend,
                                 out=tmp_path / backend), progress=False)
    for name in ("archive.parquet", "deck_cards.parquet", "matchups.parquet"):
        assert pl.read_parquet(tmp_path / "local" / name).equals(
            pl.read_parquet(tmp_path / "ray" / name)), name


@needs_ray
def test_balance_gives_the_same_suggestions_on_ray(ray_cluster, tmp_path):
    """The search, compare's verification and their figures are the same on either backend."""
    import polars as pl

    from rnr_sim.balance import BalanceOptions, balance

    t = tmp_path / "targets.toml"
    t.write_text('[targets]\ndeck_share_max = 0.52\n[scope]\ncards = ["Minuteman Volley", '
                 '"Stamp Act"]\nmax_changes = 1\n', encoding="utf-8")
    runs = [balance(BalanceOptions(targets=t, field=SAMPLE[:3], budget=30_000, seed=3,
                                   backend=backend, rediscover=False, suggestions=1,
                                   out=tmp_path / backend), progress=False, log=lambda m: None)
            for backend in ("local", "ray")]
    a, b = (pl.read_parquet(r.out / "candidates.parquet") for r in runs)
    assert a.height > 0 and a.equals(b)
    sa, sb = (r.suggestions.drop("compare_dir", "compare_command", "file") for r in runs)
    assert sa.equals(sb)


@needs_ray
def test_power_gives_the_same_table_on_ray(ray_cluster, tmp_path):
    """Card power's race, cuts and fresh deals are the same games on either backend."""
    import polars as pl

    from rnr_sim.power import PowerOptions, power

    layer = Path(__file__).parent / "fixtures" / "power" / "layer.toml"
    runs = [power(PowerOptions(field=SAMPLE[:3], cards=[layer], only_set="Power Test",
                               budget=40_000, seed=3, backend=backend,
                               out=tmp_path / backend), progress=False, log=lambda m: None)
            for backend in ("local", "ray")]
    for name in ("power", "worth"):
        a, b = (r.tables[name] for r in runs)
        assert a.height > 0 and a.equals(b), name
    assert pl.read_parquet(tmp_path / "ray" / "power.parquet").equals(runs[0].tables["power"])



@needs_ray
def test_skill_gives_the_same_games_and_table_on_ray(ray_cluster):
    """``--backend ray`` only moves where the games are played: each game is a pure
    function of its inputs, so the game frame and the skill table are the same."""
    from rnr_sim import skill

    decks = [REPO / "decks" / f"{n}.txt" for n in ("bison_bell_uprising", "eagle_blockade",
                                                   "scroll_assembly")]
    local = skill.play(decks, games=6, seed=4, threads=1)
    remote = skill.play(decks, games=6, seed=4, backend="ray")
    assert remote.drop("seconds").equals(local.drop("seconds"))  # wall time is the machine's
    assert skill.skill_table(remote, seed=4).drop("seconds").equals(
        skill.skill_table(local, seed=4).drop("seconds"))

# ---------------------------------------------------------------------------- without Ray


def test_without_ray_the_backend_says_how_to_install_it(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    res = CliRunner().invoke(app, ["run", *map(str, SAMPLE[:2]), "--games", "2",
                                   "--backend", "ray", "--out", str(tmp_path / "r")],
                             prog_name="rnr-sim")
    assert res.exit_code == 2
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and "pip install 'rnr-sim[ray]'" in lines[0]
    assert not (tmp_path / "r").exists()  # nothing half-written


def test_an_unknown_backend_or_a_stray_address_is_bad_input():
    with pytest.raises(InputError, match="unknown backend"):
        execution.open_backend("dask")
    with pytest.raises(InputError, match="--backend ray"):
        execution.open_backend("local", address="auto")


# ---------------------------------------------------------------------------- kept local


@pytest.mark.skipif(not HAVE_RAY, reason="Ray is not installed (pip install 'rnr-sim[ray]')")
def test_a_local_ray_is_started_on_the_loopback_address():
    """A fresh process importing ray for a local start: the node address Ray will give the
    local Ray's servers is the loopback one (ray 2.60 would otherwise pick the machine's
    network address even for ``_node_ip_address="127.0.0.1"``), and the setting that made
    it so is not left in the environment."""
    import subprocess

    code = ("import os; from rnr_sim.runs.ray_backend import import_ray, safety_warnings; "
            "ray = import_ray(local=True); print(ray.util.get_node_ip_address()); "
            "print(os.environ.get('RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER')); "
            "print(safety_warnings(ray, local=True))")
    env = {k: v for k, v in os.environ.items()
           if k not in ("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "RAY_AUTH_MODE")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=120, check=True).stdout.split("\n")
    assert out[:3] == ["127.0.0.1", "None", "[]"]


def test_token_authentication_turned_off_by_the_environment_is_warned(monkeypatch):
    from rnr_sim.runs.ray_backend import CVE, safety_warnings

    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")
    (warning,) = safety_warnings(None, local=False)
    assert "RAY_AUTH_MODE=disabled turns Ray's token authentication off" in warning
    assert CVE == "CVE-2023-48022" and CVE in warning
    monkeypatch.setenv("RAY_AUTH_MODE", "token")
    assert safety_warnings(None, local=False) == []
    monkeypatch.delenv("RAY_AUTH_MODE")
    assert safety_warnings(None, local=False) == []  # Ray's default: on
