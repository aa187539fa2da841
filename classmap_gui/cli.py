"""The ``classmap`` command: the same core as the app, headless.

Every sub-command reports invalid input as one line on stderr and a non-zero exit code.
Benchmarks live in ``classmap_gui.core.bench.<name>``; each module there has
``OPTIONS`` (name -> (default, help)) and ``run(*, progress, should_stop, **options) -> dict``.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import time

from .core.errors import ClassMapError

BENCHES = ("features", "classmap", "compressive", "scale")


class ProgressBar:
    """A one-line terminal progress bar with stage name and remaining-time estimate (stderr)."""

    def __init__(self, stream=sys.stderr, enabled: bool | None = None):
        self.stream = stream
        self.enabled = stream.isatty() if enabled is None else enabled
        self.stage = None
        self.t0 = time.perf_counter()
        self.last = 0.0

    def __call__(self, fraction: float, stage: str) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        if stage != self.stage:
            if self.stage is not None:
                self.stream.write("\n")
            self.stage, self.t0 = stage, now
        elif now - self.last < 0.1 and fraction < 1.0:
            return
        self.last = now
        elapsed = now - self.t0
        eta = f" {elapsed / fraction - elapsed:5.0f}s left" if 0.02 < fraction < 1 else ""
        filled = int(30 * fraction)
        self.stream.write(f"\r{stage[:40]:<40} [{'#' * filled}{'.' * (30 - filled)}] {100 * fraction:5.1f}%{eta}   ")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled and self.stage is not None:
            self.stream.write("\n")
            self.stream.flush()
            self.stage = None


def parse_sets(items: list[str] | None) -> dict[str, object]:
    """``["k=v,k2=v2", "k3=v3"]`` -> ``{"k": v, ...}`` with ints, floats, booleans and None parsed."""
    out: dict[str, object] = {}
    for item in items or []:
        for pair in filter(None, item.split(",")):
            if "=" not in pair:
                raise ClassMapError(f"--set expects key=value, got {pair!r}")
            k, v = pair.split("=", 1)
            out[k.strip()] = parse_value(v.strip())
    return out


def parse_value(v: str) -> object:
    low = v.lower()
    if low in ("true", "yes", "on"):
        return True
    if low in ("false", "no", "off"):
        return False
    if low in ("none", "null"):
        return None
    for cast in (int, float):
        try:
            return cast(v)
        except ValueError:
            pass
    return v


def emit(result: object, as_json: bool, text: str | None = None) -> None:
    """Print ``result`` as JSON, or ``text`` (default: JSON anyway) for people."""
    if as_json or text is None:
        print(json.dumps(result, indent=2, default=_json_default))
    else:
        print(text)


def _json_default(o: object) -> object:
    import numpy as np

    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


# ---------------------------------------------------------------- commands

def cmd_datasets(args: argparse.Namespace) -> int:
    from .core.data import builtin_datasets

    rows = [{"name": d.name, "available": bool(d.available()), "description": d.description,
             "how_to_get": d.how_to_get} for d in builtin_datasets()]
    text = "\n".join(f"{r['name']:<18} {'yes' if r['available'] else 'no ':<4} {r['description']}"
                     + ("" if r["available"] else f"  (install: {r['how_to_get']})") for r in rows)
    emit(rows, args.json, f"{'name':<18} {'here':<4} description\n{text}")
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    extra = parse_sets(args.set)
    try:
        mod = importlib.import_module(f"classmap_gui.core.bench.{args.bench}")
    except ModuleNotFoundError as exc:
        raise ClassMapError(f"benchmark {args.bench!r} is not available in this build ({exc})") from exc
    options = {k: v for k, v in vars(args).items() if k in mod.OPTIONS and v is not None}
    options.update(extra)
    if "cache_dir" in mod.OPTIONS and "cache_dir" not in options:  # core reads no environment: the CLI does
        options["cache_dir"] = bench_cache_dir(args.bench)
    unknown = set(options) - set(mod.OPTIONS)
    if unknown:
        raise ClassMapError(f"bench {args.bench}: unknown option(s) {', '.join(sorted(unknown))}; "
                            f"known: {', '.join(mod.OPTIONS)}")
    bar = ProgressBar()
    try:
        result = mod.run(progress=bar, **options)
    finally:
        bar.close()
    emit(result, True)
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(result, fh, indent=2, default=_json_default)
    return 0


def bench_cache_dir(bench: str) -> str:
    """The cache folder of ``bench``: ``$CLASSMAP_CACHE``, else the user cache folder (platformdirs)."""
    env = os.environ.get("CLASSMAP_CACHE")
    if env:
        return env
    from platformdirs import user_cache_dir

    return os.path.join(user_cache_dir("classmap-studio"), f"bench-{bench}")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="classmap", description="Train and run many-class image recognisers.")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    s = sub.add_parser("datasets", help="list built-in data sets and whether each is available here")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_datasets)

    s = sub.add_parser("bench", help="run a benchmark and print JSON")
    bsub = s.add_subparsers(dest="bench", required=True, metavar="BENCH")
    for name in BENCHES:
        b = bsub.add_parser(name, help=f"the {name} benchmark")
        try:
            opts = importlib.import_module(f"classmap_gui.core.bench.{name}").OPTIONS
        except ImportError:
            opts = {}
        for opt, (default, helptext) in opts.items():
            b.add_argument(f"--{opt.replace('_', '-')}", dest=opt, type=parse_value, default=None,
                           help=f"{helptext} (default: {default})")
        b.add_argument("--json", action="store_true", help="print JSON (always on for benchmarks)")
        b.add_argument("--set", action="append", metavar="KEY=VALUE", help="further options")
        b.add_argument("--out", help="also write the JSON to this file")
        b.set_defaults(func=cmd_bench)

    from . import cli_model  # train / eval / predict / add-class

    cli_model.add_commands(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except ClassMapError as exc:
        print(f"classmap: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("classmap: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # `classmap predict ... | head`: the reader left; exit quietly like other Unix tools.
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


if __name__ == "__main__":
    sys.exit(main())
