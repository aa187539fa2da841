"""The roofline account of ``bench roofline`` as a Markdown table, and the docs block it regenerates.

:func:`render` turns the bench's JSON into the table docs/classmap.md carries; :func:`write_block` puts it
between the ``<!-- roofline:begin -->`` / ``<!-- roofline:end -->`` markers of a Markdown file (the rest of
the file is left as it is). Rows without timings (the operation and byte counts alone) render with dashes.
"""
from __future__ import annotations

from pathlib import Path

from ..core.errors import ConfigError

BEGIN, END = "<!-- roofline:begin -->", "<!-- roofline:end -->"


def _num(v, fmt: str) -> str:
    return "–" if v is None else format(v, fmt)


def _fmt_count(v: float) -> str:
    for unit, k in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if v >= k:
            return f"{v / k:.3g} {unit}"
    return f"{v:.3g}"


def render(result: dict) -> str:
    """Markdown of :func:`.roofline.run`'s ``result``: the machine's roofs, then per size one table row per
    (mode, method or stage): time per query, flop and bytes per query, achieved rate, the roofline floor
    and what bounds it, and the share of that floor reached (1.0: at the roof)."""
    m = result.get("machine", {})
    lines = [f"Machine: peak SGEMM {_num(m.get('peak_gflops'), '.0f')} GFLOP/s "
             f"({_num(m.get('peak_gflops_one_thread'), '.0f')} on one thread), read bandwidth "
             f"{_num(m.get('dram_gbs'), '.0f')} GB/s from memory, {_num(m.get('llc_gbs'), '.0f')} GB/s from the "
             f"last-level cache ({_num(m.get('llc_mb'), '.0f')} MB); load average "
             f"{', '.join(f'{x:.2f}' for x in m.get('load_average', [])) or '–'}.", ""]
    for i, size in enumerate(result.get("sizes", [])):
        sp = size.get("speedup") or {}
        ratio = " · ".join(f"{mode} {_num(sp[mode].get('median'), '.1f')}× brute force (`roofline.json` "
                           f"`sizes.{i}.speedup.{mode}.median`)" for mode in ("single", "batch") if sp.get(mode))
        what = (f"saved model `{Path(size['model']).name}` (test accuracy: brute force "
                f"{100 * size['accuracy']['brute_force']:.2f} %, ClassMap {100 * size['accuracy']['classmap']:.2f} %), "
                if size.get("model") else "")
        lines += [f"**{what}C = {size['C']}, D = {size['D']}, d = {size['d']}, p = {size['p']}, batch {size['batch']}** "
                  f"(operation limit {size['op_limit']:.1f}×, `roofline.json` `sizes.{i}.op_limit`"
                  f"{'; measured: ' + ratio if ratio else ''})", "",
                  "| mode | method / stage | ms per query | flop per query | bytes per query | GFLOP/s | GB/s "
                  "| roofline floor (ms) | bound by | share of floor |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for row in size["rows"]:
            lines.append(f"| {row['mode']} | {row['method']} | {_num(row.get('ms'), '.4f')} | {_fmt_count(row['flop'])} "
                         f"| {_fmt_count(row['bytes'])} | {_num(row.get('gflops'), '.1f')} | {_num(row.get('gbs'), '.1f')} "
                         f"| {_num(row.get('floor_ms'), '.4f')} | {row.get('bound') or '–'} "
                         f"| {_num(row.get('of_floor'), '.2f')} |")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def write_block(path: str | Path, markdown: str) -> None:
    """Replace the text between the roofline markers of the Markdown file ``path`` with ``markdown``."""
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        raise ConfigError(f"{path} has no single {BEGIN} ... {END} block for the roofline table")
    head, rest = text.split(BEGIN)
    _, tail = rest.split(END)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(f"{head}{BEGIN}\n{markdown}{END}{tail}", encoding="utf-8")
    tmp.replace(path)
