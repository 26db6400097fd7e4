"""The ``skill`` subcommand: each deck's win share with each of its pilots (``rnr_sim.skill``)."""

from __future__ import annotations

import contextlib
import json
import shlex
import shutil
import sys
import textwrap
import time
from pathlib import Path

import typer

from rnr_sim.commands import options as opt

OPTIONS = {
    "decks": opt.argument(list[Path], metavar="DECK", help="Deck lists (at least 2)."),
    "games": opt.games_option("Deals per opponent (each in both seat orders, for every "
                              "pilot).", default=200),
    "tuned": opt.option(list[str] | None, "--tuned", metavar="DECK=FILE",
                        help="The tuned pilot of a deck (its list's path or its name) as a "
                             "policy file; repeat for more decks. Default: the deck's Policy: "
                             "file, if any."),
    "out": opt.out_option("RUN_DIR", "Write skill.parquet into this folder (a run dir or a new "
                                     "folder)."),
    "search": opt.option(bool, "--search",
                         help="Add the search pilot (the yardstick) at its default budget, "
                              "K=8 rollouts x N=2 determinizations (--rollouts and "
                              "--determinizations set another). Strength and cost: "
                              "docs/benchmarks.md."),
    "rollouts": opt.option(int, "--rollouts", "-k", default=0, metavar="K",
                           help="Add the search pilot: K rollouts per legal action and "
                                "determinization at each Play Phase decision (0: no search "
                                "pilot, unless --search). Its cost: docs/benchmarks.md."),
    "determinizations": opt.option(int, "--determinizations", default=2, metavar="N",
                                   show_default=True,
                                   help="With --rollouts: deals of the hidden cards "
                                        "(opponents' hands and Draw Piles) per rollout batch; "
                                        "each option is weighed on K x N playouts."),
    "gate": opt.option(float | None, "--gate", metavar="Z",
                       help="The search pilot leaves its own pilot's pick only for an option "
                            "better by Z standard errors, paired over the same playouts "
                            "(default 1; 0: the best mean)."),
    "open_lists": opt.option(bool, "--open-lists",
                             help="The search pilot knows its opponents' deck lists (a "
                                  "tournament that publishes them). Default: it deals their "
                                  "hidden cards from what it has seen and the decks given "
                                  "(R59)."),
    "resume": opt.option(bool, "--resume",
                         help="Carry on the run stopped (Ctrl-C) in RUN_DIR: --resume RUN_DIR, "
                              "or --resume --out RUN_DIR; give the same decks and options. The "
                              "games kept in RUN_DIR/.skill/ are not played again."),
    "field_weights": opt.field_weights_option(
        "after the table against every deck, each deck's pilots again against that field "
        "(the field decks it meets, weights scaled over them), paired as above"),
}


@opt.command("skill", OPTIONS,
             short_help="How much of each deck's strength is its pilot "
                        "(random/default/tuned/search).",
             epilog="Example: rnr-sim skill decks/*.txt --games 400 --out runs/meta")
def skill_command(*, decks, games, tuned, out, search, rollouts, determinizations, gate,
                  open_lists, resume, field_weights, seed, cards, rules, threads, backend,
                  address, quiet, as_json) -> None:
    """Each deck plays every other given deck (those keep their own Policy: pilots) with each
    of its own pilots: random (the floor), default (the built-in it plays by: its
    Policy: header, or that policy file's base) and tuned (its Policy: header when that
    is a policy file, or --tuned DECK=FILE) and, with --search or --rollouts K, search
    (Monte-Carlo over each Play Phase decision, the deck's own pilot playing the
    rollouts and kept unless an option beats its pick clearly: the yardstick). Every pilot of a deck plays the same deals, both seat orders, so the
    difference from the default pilot is paired deal by deal (95% interval). Decks are
    sorted by the default pilot's gap to the best pilot measured, largest first: a deck
    whose tuned pilot gains a lot was misjudged with its default one. --out writes
    skill.parquet into a run dir (an existing one from rnr-sim run: its report then
    shows a Skill section). Cost: (pilots per deck) x (decks - 1) x 2 x --games games
    per deck. --backend ray plays the games as Ray tasks (the same table). With --out,
    Ctrl-C stops after the games under way and keeps the engine calls played in
    RUN_DIR/.skill/; the same command with --resume plays the rest."""
    from tqdm import tqdm

    from rnr_sim.analytics.field import check_before_play
    from rnr_sim.errors import InputError

    check_before_play(field_weights, list(decks))
    seed = opt.DEFAULT_SEED if seed is None else seed
    if search and rollouts == 0:
        from rnr_sim.skill import SEARCH_DEFAULT

        rollouts = SEARCH_DEFAULT[0]
    gate100 = None if gate is None else round(gate * 100)

    if resume and out is None:
        raise InputError("--resume continues a skill run stopped in a RUN_DIR (--out): give "
                         "that dir, --resume RUN_DIR")
    if out is not None and out.exists() and not out.is_dir():
        raise InputError(f"--out {out}: not a folder; give a run dir or a new folder")
    bars: list = []  # the bar starts once the input is checked: an error stays one line
    resumed = [0]

    def start(total: int, kept: int) -> None:
        resumed[0] = kept
        bars.append(tqdm(total=total, initial=kept, unit=" games", unit_scale=True,
                         file=sys.stderr, dynamic_ncols=True, desc="rnr-sim skill",
                         disable=as_json or quiet))

    with _locked(out):
        _skill(decks, games, seed, threads, tuned, cards, rules, backend, address,
               (rollouts, determinizations, gate100, open_lists), out, resume, as_json, bars,
               start, resumed, field_weights, quiet)


@contextlib.contextmanager
def _locked(out: Path | None):
    """``--out``'s dir, created if new and locked while skill plays and writes into it (one
    writer at a time, as `run` and the searches; a second one is told the first's pid);
    a dir it created is removed again when bad input stops it before anything is kept."""
    from rnr_sim.errors import InputError
    from rnr_sim.files import make_dir
    from rnr_sim.runs.dirlock import DirLock

    if out is None:
        yield
        return
    created = make_dir(out)
    try:
        with DirLock(out, "run dir"):
            yield
    except InputError:
        if created and not any(out.iterdir()):
            shutil.rmtree(out, ignore_errors=True)
        raise


def _skill(decks, games, seed, threads, tuned, cards, rules, backend, address, budget,
           out, resume, as_json, bars, start, resumed, field_weights=None,
           quiet: bool = False) -> None:
    """The games, the table and what is printed, ``--out`` locked (``_locked``; with
    ``quiet`` and ``--out``, only where the table was written);
    ``budget``: the search pilot's (rollouts, determinizations, gate x 100 or None, open
    lists); ``field_weights``: the table again against that field (``skill.against``)."""
    from rnr_sim import skill

    rollouts, determinizations, gate, open_lists = budget
    t0 = time.perf_counter()
    try:
        games_frame = skill.play(decks, games=games, seed=seed, threads=threads,
                                 tuned=tuned or [], cards=cards, rules=rules,
                                 progress=lambda n: bars[0].update(n), on_plan=start,
                                 backend=backend, address=address, rollouts=rollouts,
                                 determinizations=determinizations, out=out, resume=resume,
                                 gate=gate, open_lists=open_lists)
    except skill.Stopped as stopped:
        for bar in bars:
            bar.close()
        again = _command_line(decks, games, seed, tuned, out, cards, rules, threads,
                              backend, address, budget, as_json)
        typer.echo(f"Stopped: {stopped.kept:,} of {stopped.total:,} games kept in {out}; "
                   f"continue with: {again}", err=True)
        raise typer.Exit(opt.EXIT_INTERRUPTED) from None
    finally:
        for bar in bars:
            bar.close()
    table = skill.skill_table(games_frame, seed=seed)
    weighted = weights = None
    if field_weights is not None:
        from rnr_sim.analytics.field import field_text, parse_field_weights

        weights = parse_field_weights(field_weights, sorted(set(games_frame["deck"])))
        weighted = skill.skill_table(games_frame, seed=seed, weights=weights)
    path = skill.write(table, out) if out is not None else None
    if out is not None:
        skill.checkpoint(out).remove()
    seconds = time.perf_counter() - t0  # this invocation's (a resumed run's earlier ones not)
    if as_json:
        data = skill.to_json(table)
        data["seconds"] = round(seconds, 1)
        data["games_resumed"] = resumed[0]
        data["out"] = None if path is None else str(path)
        if weighted is not None:
            data["field_weights"] = weights
            data["against_field"] = skill.to_json(weighted)
        typer.echo(json.dumps(data, indent=2))
        return
    if quiet and path is not None:
        typer.echo(f"Wrote {path}.")
        return
    if resumed[0]:
        typer.echo(f"Skill: {len(decks)} decks, {len(games_frame):,} games ({resumed[0]:,} "
                   f"kept from the stopped run); {seconds:.1f} s this time (seed {seed}).")
    else:
        typer.echo(f"Skill: {len(decks)} decks, {len(games_frame):,} games in {seconds:.1f} s "
                   f"(seed {seed}).")
    for line in skill.text_lines(table):
        typer.echo(line)
    if weighted is not None:
        typer.echo("")
        head = (f"Against your field ({field_text(weights)}): each deck's win share with each "
                "pilot over the field decks it meets, their weights scaled to sum to 1: its "
                "own copy is left out, as skill plays no mirror, where run and compare count "
                "it as half its games ("
                + ("the table above and skill.parquet count" if path is not None else
                   "the table above counts") + " every deck alike):")
        lines = skill.text_lines(weighted)
        for line in [*textwrap.wrap(head, width=92), *lines[:lines.index("")]]:
            typer.echo(line)
    if path is not None:
        typer.echo(f"Wrote {path}.")


def _command_line(decks, games, seed, tuned, out, cards, rules, threads, backend, address,
                  budget, as_json) -> str:
    """The ``rnr-sim skill ... --resume`` line that continues a stopped run: the same
    decks and options as given (the ones that shape the games must not change)."""
    args = ["rnr-sim", "skill", *map(str, decks), "--games", str(games), "--seed", str(seed)]
    for item in tuned or []:
        args += ["--tuned", item]
    for path in ([] if cards is None else cards if isinstance(cards, list) else [cards]):
        args += ["--cards", str(path)]
    if rules is not None:
        args += ["--rules", str(rules)]
    rollouts, determinizations, gate, open_lists = budget
    if rollouts:
        args += ["--rollouts", str(rollouts), "--determinizations", str(determinizations)]
        if gate is not None:
            args += ["--gate", f"{gate / 100:g}"]
        if open_lists:
            args.append("--open-lists")
    if threads is not None:
        args += ["--threads", str(threads)]
    if backend != "local":
        args += ["--backend", backend]
    if address is not None:
        args += ["--address", address]
    if as_json:
        args.append("--json")
    return shlex.join([*args, "--out", str(out), "--resume"])
