"""Subcommands about the inputs: ``cards`` (the catalog), ``validate`` (Article V), ``rules``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from rnr_sim import enums
from rnr_sim.cards import load_catalog
from rnr_sim.cards.schema import TYPE_STATS
from rnr_sim.commands import options as opt
from rnr_sim.decks import is_legal, load_deck, validate_deck
from rnr_sim.display import format_table
from rnr_sim.errors import InputError
from rnr_sim.patches import toml_value
from rnr_sim.pilots import resolve_policies
from rnr_sim.rules import SWITCHES, load_profile

EXIT_ILLEGAL = 1
EXIT_BAD_INPUT = 2

def _shown_path(path) -> str:
    """A file's path as a user reads it: relative to the working folder when inside it."""
    if path is None:
        return "built in"
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


# ---------------------------------------------------------------------------- cards


CARDS_OPTIONS = {
    "card_type": opt.option(str | None, "--type", metavar="T",
                            help=f"Only this Order: {', '.join(enums.CARD_TYPES)}."),
    "branch": opt.option(str | None, "--branch", metavar="B",
                         help=f"Only this Branch: {', '.join(enums.BRANCHES)}."),
    "set_name": opt.option(str | None, "--set", metavar="NAME",
                           help="Only the cards this set defines (errata'd or not), any case."),
}


@opt.command("cards", CARDS_OPTIONS, short_help="List the card catalog.",
             epilog="Example: rnr-sim cards --type freedom --branch eagle; rnr-sim cards "
                    "--cards base.toml --cards expansion.toml --set Expansion")
def cards_command(*, card_type, branch, set_name, cards, as_json) -> None:
    """List the card catalog as the tool reads it: stats, keywords, parsed effects."""
    type_filter = pick(card_type, enums.CARD_TYPES, "--type", "card type")
    branch_filter = pick(branch, enums.BRANCHES, "--branch", "branch")
    catalog = load_catalog(cards)
    set_filter = pick_set(set_name, catalog.sets)
    shown = [
        (i, c) for i, c in enumerate(catalog.cards)
        if type_filter in (None, c.type) and branch_filter in (None, c.branch)
        and set_filter in (None, catalog.set_of(i))
    ]
    if as_json:
        typer.echo(json.dumps(cards_json(catalog, shown), indent=2, ensure_ascii=False))
        return
    typer.echo(f"{catalog_title(catalog)}: {len(shown)} of {len(catalog)} cards")
    if not shown:
        return
    # One set: the title names it, and the table is as it always was. Several: a column.
    with_set = len(catalog.sets) > 1
    with_errata = any(c.errata for c in catalog.cards)
    rows = [
        [str(i), c.name]
        + ([catalog.set_of(i)] if with_set else [])
        + [c.type, c.branch, c.rarity, "-" if c.type == "ua" else str(c.cost),
           c.stats(), ", ".join(c.keywords), c.describe_effects()]
        + ([", ".join(_shown_place(at) for at in c.errata)] if with_errata else [])
        for i, c in shown
    ]
    header = (["id", "name"] + (["set"] if with_set else [])
              + ["type", "branch", "rarity", "cost", "stats", "keywords", "effects"]
              + (["errata"] if with_errata else []))
    for line in format_table(header, rows, right={0, header.index("cost")}):
        typer.echo(line)


def cards_json(catalog, shown) -> dict[str, Any]:
    """The catalog as ``cards --json`` prints it: its sets and files, then each card shown
    with the fields the table shows, stats by name and effects one string each."""
    return {
        "sets": [{"name": name, "version": version,
                  "path": None if source.path is None else _shown_path(source.path)}
                 for source, (name, version) in zip(catalog.sources, catalog.source_sets,
                                                    strict=True)],
        "cards_total": len(catalog),
        "cards": [{
            "id": i, "name": c.name, "set": catalog.set_of(i), "type": c.type,
            "branch": c.branch, "rarity": c.rarity,
            "cost": None if c.type == "ua" else c.cost,
            "stats": {s: getattr(c, s) for s in TYPE_STATS[c.type] if s != "cost"},
            "keywords": list(c.keywords),
            "effects": [e.describe() for e in c.all_effects()],
            "errata": [_shown_place(at) for at in c.errata],
        } for i, c in shown],
    }


def catalog_title(catalog) -> str:
    """``Set vN (path)``; for several files, each one's set, version and path, joined."""
    if len(catalog.sources) <= 1:
        version = f" v{catalog.version}" if catalog.version else ""
        return f"{catalog.name}{version} ({_shown_path(catalog.path)})"
    return " + ".join(
        f"{name}{f' v{version}' if version else ''} ({_shown_path(source.path)})"
        for source, (name, version) in zip(catalog.sources, catalog.source_sets, strict=True)
    )


def _shown_place(at: str) -> str:
    """``file:line`` with the file shown as ``_shown_path`` shows it."""
    path, sep, line = at.rpartition(":")
    if not sep or not line.isdigit():
        return _shown_path(at)
    return f"{_shown_path(path)}:{line}"


def pick_set(value: str | None, sets: tuple[str, ...]) -> str | None:
    """``value`` as one of the loaded ``sets`` (any case), else InputError."""
    if value is None:
        return None
    by_folded = {s.casefold(): s for s in sets}
    found = by_folded.get(value.strip().casefold())
    if found is None:
        raise InputError(f"--set: no set '{value}' in the catalog; loaded sets: "
                         f"{', '.join(sets)}")
    return found


def pick(value: str | None, valid: tuple[str, ...], option: str, what: str) -> str | None:
    """``value`` as one of ``valid`` (case, spaces and hyphens forgiven), else InputError."""
    if value is None:
        return None
    key = value.strip().lower().replace("-", "_").replace(" ", "_")
    if key not in valid:
        raise InputError(f"{option}: unknown {what} '{value}'; valid: {', '.join(valid)}")
    return key


# ---------------------------------------------------------------------------- validate


VALIDATE_OPTIONS = {"decks": opt.argument(list[Path], metavar="DECK", help="Deck list files.")}


@opt.command("validate", VALIDATE_OPTIONS, short_help="Check deck lists against Article V.",
             epilog="Example: rnr-sim validate decks/*.txt --rules variant.toml")
def validate_command(*, decks, cards, rules) -> None:
    """Check deck lists against the Laws of Deck Construction (Article V). Exit 0 all legal, 1
    some illegal, 2 a file could not be read."""
    from rnr_sim.decks import catalog_paths

    catalog = load_catalog(catalog_paths(cards, decks))
    profile = load_profile(rules)
    if rules is not None:
        changed = ", ".join(f"{k} = {toml_value(v)}" for k, v in profile.changed().items())
        typer.echo(f"rules profile '{profile.name}' ({rules}): "
                   f"{changed or 'every switch at its default'}")
    n_legal, n_illegal, n_unreadable = 0, 0, 0
    for path in decks:
        try:
            deck = load_deck(path, catalog)
            resolve_policies([deck], None)  # its Policy: header names a pilot that exists
        except InputError as e:
            typer.echo(str(e), err=True)
            n_unreadable += 1
            continue
        violations = validate_deck(deck, catalog, profile)
        if is_legal(violations):
            n_legal += 1
            typer.echo(f"OK {deck.name} ({path})")
        else:
            n_illegal += 1
            n = sum(not v.warning for v in violations)
            typer.echo(f"ILLEGAL {deck.name} ({path}): {n} violation{'s' if n != 1 else ''}")
        for v in violations:
            typer.echo(f"  {v}")
    if len(decks) > 1:
        unreadable = f", {n_unreadable} unreadable" if n_unreadable else ""
        typer.echo(f"{n_legal} legal, {n_illegal} illegal{unreadable}")
    if n_unreadable:
        raise typer.Exit(EXIT_BAD_INPUT)
    if n_illegal:
        raise typer.Exit(EXIT_ILLEGAL)


# ---------------------------------------------------------------------------- rules


@opt.command("rules", short_help="Show the rules profile's switches.",
             epilog="Example: rnr-sim rules --rules variant.toml")
def rules_command(*, rules, as_json) -> None:
    """Show every rules switch: value, default, ruling and the article it reads."""
    profile = load_profile(rules)
    changed = profile.changed()
    if as_json:
        typer.echo(json.dumps({
            "profile": profile.name, "source": None if not profile.source else str(profile.source),
            "changed": sorted(changed),
            "switches": [{"name": s.name, "value": profile[s.name], "default": s.default,
                          "choices": list(s.choices) if s.choices else None,
                          "ruling": s.ruling, "source": s.cite, "summary": s.summary}
                         for s in SWITCHES],
        }, indent=2, ensure_ascii=False))
        return
    source = f" ({profile.source})" if profile.source else " (the defaults)"
    typer.echo(f"rules profile '{profile.name}'{source}: "
               f"{len(changed)} of {len(SWITCHES)} switches changed")
    rows = [
        ["*" if s.name in changed else "", s.name, toml_value(profile[s.name]),
         toml_value(s.default), s.ruling, s.cite, s.summary + allowed(s)]
        for s in SWITCHES
    ]
    header = ["", "switch", "value", "default", "ruling", "source", "summary"]
    for line in format_table(header, rows):
        typer.echo(line)
    typer.echo("* = not the default. Set switches in a TOML file and pass --rules PATH "
               "(rulings: docs/rulings.md).")


def allowed(switch: Any) -> str:
    if switch.choices:
        return f" ({' | '.join(switch.choices)})"
    return ""
