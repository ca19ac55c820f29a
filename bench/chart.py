#!/usr/bin/env python3
"""Grouped bar charts as SVG from a benchmark result file (Python 3 standard library only).

    python3 bench/chart.py results.tsv --title "Rebuild after a change" \\
        --output docs/img/embed-rebuild.svg

The input is a tab-separated (or, for a `.csv` file, comma-separated) table with a header
row naming its columns, in any order:

    group    series    value    unit    [metric]

`group` is one cluster of bars on the x axis (e.g. "weights changed"), `series` one bar in
each cluster and one legend entry (e.g. "webnn-weights", "include_bytes!"), `value` a
finite number >= 0, `unit` its unit ("s", "GB"). The optional `metric` column (e.g.
"time", "peak memory") splits the rows into panels drawn side by side, one per (metric,
unit), each with its own axis labelled "metric (unit)"; without it, one panel per unit.
Blank lines and lines starting with `#` are skipped. A (panel, group, series) may appear
once; a missing one leaves a gap.

Series keep the order of their first appearance; the first is drawn in the accent colour
(put "ours" first), the others in greys. `--baseline SERIES` adds to each bar of the first
series its ratio to that series' bar in the same group ("0.13x"; say so in --subtitle).
Value labels show the numbers as written in the file.

Errors (unreadable file, missing column, bad number, duplicate row, ...) are printed as
`chart.py: FILE:LINE: what is wrong` with exit status 1 (2 for usage errors), and no output
file is written; the SVG is written to a temporary file and renamed into place.
"""

import argparse
import csv
import math
import os
import sys
import tempfile
from xml.sax.saxutils import escape

REQUIRED = ("group", "series", "value", "unit")
OPTIONAL = ("metric",)

# The first series (ours) in the accent colour, then greys from dark to light.
PALETTE = ["#1f6fd1", "#7a7f87", "#b4b9c0", "#d5d9de", "#565b63"]
TEXT = "#1d2127"
MUTED = "#5b616b"
GRID = "#e3e6ea"
FONT = "Helvetica, Arial, sans-serif"

# Layout (px).
PANEL_WIDTH_MIN = 300
BAR_WIDTH = 46
BAR_GAP = 6
GROUP_GAP = 34
PLOT_HEIGHT = 230
MARGIN = 24
AXIS_LABEL_SPACE = 62  # left of each plot: tick labels and the rotated axis label
PANEL_GAP = 36


class InputError(Exception):
    """Bad input: the message names the file (and line) and what is wrong."""


def read_rows(path):
    """Returns the rows of `path` as dicts with keys group, series, value (float), unit,
    metric ('' when the column is absent) and line (1-based)."""
    delimiter = "," if path.lower().endswith(".csv") else "\t"
    try:
        with open(path, newline="", encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise InputError(f"{path}: cannot read: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not UTF-8 text: {e.reason} at byte {e.start}") from None

    numbered = [
        (number, line)
        for number, line in enumerate(lines, start=1)
        if line.strip() and not line.lstrip().startswith("#")
    ]
    if not numbered:
        raise InputError(f"{path}: no header row (expected the columns {', '.join(REQUIRED)})")
    records = csv.reader([line for _, line in numbered], delimiter=delimiter)
    header_line, header = numbered[0][0], [c.strip().lower() for c in next(records)]
    kind = "comma" if delimiter == "," else "tab"
    for column in REQUIRED:
        if column not in header:
            raise InputError(
                f"{path}:{header_line}: no `{column}` column in the header "
                f"(expected {kind}-separated columns {', '.join(REQUIRED)}[, metric]; "
                f"found {header})"
            )
    unknown = [c for c in header if c not in REQUIRED + OPTIONAL]
    if unknown or len(set(header)) != len(header):
        raise InputError(
            f"{path}:{header_line}: unexpected or repeated columns {unknown or header} "
            f"(allowed: {', '.join(REQUIRED + OPTIONAL)}, each once)"
        )

    rows = []
    for (number, _), record in zip(numbered[1:], records):
        if len(record) != len(header):
            raise InputError(
                f"{path}:{number}: expected {len(header)} {kind}-separated fields "
                f"({', '.join(header)}), found {len(record)}"
            )
        row = {name: value.strip() for name, value in zip(header, record)}
        for column in ("group", "series", "unit"):
            if not row[column]:
                raise InputError(f"{path}:{number}: empty `{column}`")
        try:
            value = float(row["value"])
        except ValueError:
            raise InputError(
                f"{path}:{number}: value `{row['value']}` is not a number"
            ) from None
        if not math.isfinite(value) or value < 0:
            raise InputError(
                f"{path}:{number}: value `{row['value']}` must be a finite number >= 0"
            )
        row["value"] = value
        row["text"] = row_text(row["value"], record[header.index("value")].strip())
        row.setdefault("metric", "")
        row["line"] = number
        rows.append(row)
    if not rows:
        raise InputError(f"{path}: a header but no data rows")
    return rows


def row_text(value, raw):
    """The label of a value: as written in the file (so `1.10` stays `1.10`), unless it is
    written with an exponent."""
    return format_number(value) if "e" in raw.lower() else raw


def ordered_unique(items):
    seen = {}
    for item in items:
        seen.setdefault(item, None)
    return list(seen)


def build_model(rows, path, baseline):
    """Groups rows into panels: [(metric, unit, {(group, series): value})], plus the group
    and series orders. Raises InputError on duplicates or an unknown baseline."""
    groups = ordered_unique(r["group"] for r in rows)
    series = ordered_unique(r["series"] for r in rows)
    panel_keys = ordered_unique((r["metric"], r["unit"]) for r in rows)
    panels = []
    for metric, unit in panel_keys:
        values, texts, lines = {}, {}, {}
        for r in rows:
            if (r["metric"], r["unit"]) != (metric, unit):
                continue
            key = (r["group"], r["series"])
            if key in values:
                what = f"{metric} ({unit})" if metric else unit
                raise InputError(
                    f"{path}:{r['line']}: a second value for group `{key[0]}`, series "
                    f"`{key[1]}`, {what} (first on line {lines[key]})"
                )
            values[key], texts[key], lines[key] = r["value"], r["text"], r["line"]
        panels.append((metric, unit, values, texts))
    if baseline is not None and baseline not in series:
        raise InputError(
            f"{path}: --baseline `{baseline}` is not a series of the file "
            f"(series: {', '.join(series)})"
        )
    return panels, groups, series


def nice_ceiling(value):
    """The axis maximum and tick step: a 1/2/2.5/5 x 10^k step, 4 to 6 ticks, above value."""
    if value <= 0:
        return 1.0, 0.25
    raw_step = value / 5
    magnitude = 10 ** math.floor(math.log10(raw_step))
    for factor in (1, 2, 2.5, 5, 10):
        step = factor * magnitude
        if step * 5 >= value * 1.0001:
            break
    top = step * math.ceil(value * 1.0001 / step)
    return top, step


def format_number(value):
    """Up to 3 significant digits, no exponent for the magnitudes benchmarks produce."""
    if value == 0:
        return "0"
    digits = max(0, 2 - int(math.floor(math.log10(abs(value)))))
    text = f"{value:.{digits}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def format_ratio(ratio):
    return f"{ratio:.2f}x" if ratio < 10 else f"{ratio:.1f}x"


def text_width(text, size):
    """An estimate of the rendered width of `text` in a sans-serif font (no metrics in
    the standard library): narrow, wide and average characters."""
    narrow = sum(text.count(c) for c in "ijlrtf.,:;!'|() ")
    wide = sum(text.count(c) for c in "mwMW@%")
    caps = sum(1 for c in text if c.isupper()) - sum(text.count(c) for c in "MW")
    rest = len(text) - narrow - wide - caps
    return size * (0.30 * narrow + 0.85 * wide + 0.68 * caps + 0.56 * rest)


def wrap(text, size, width):
    """Splits `text` at spaces into at most two lines that fit `width` where possible."""
    if text_width(text, size) <= width or " " not in text:
        return [text]
    words = text.split(" ")
    best = None
    for i in range(1, len(words)):
        lines = [" ".join(words[:i]), " ".join(words[i:])]
        longest = max(text_width(line, size) for line in lines)
        if best is None or longest < best[0]:
            best = (longest, lines)
    return best[1]


def svg_text(x, y, text, size, anchor="middle", weight="normal", fill=TEXT, extra=""):
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" '
        f'font-weight="{weight}" fill="{fill}"{extra}>{escape(text)}</text>'
    )


VALUE_SIZE = 11.5


def value_labels(values, texts, unit, group, name, first, baseline):
    """The lines above a bar: the value with its unit, and for the first series (ours)
    its ratio to the baseline series' bar of the same group, when there is one."""
    lines = [f"{texts[(group, name)]} {unit}"]
    if first and baseline is not None and name != baseline:
        base = values.get((group, baseline))
        if base:
            lines.append(format_ratio(values[(group, name)] / base))
    return lines


def render(panels, groups, series, title, subtitle, baseline):
    """The SVG document (a string) for the model."""
    n_series = len(series)
    # Each bar sits in a slot wide enough for its labels, so neighbours never overlap.
    label_width = max(
        text_width(line, VALUE_SIZE)
        for metric, unit, values, texts in panels
        for (group, name) in values
        for line in value_labels(values, texts, unit, group, name,
                                 name == series[0], baseline)
    )
    slot = max(BAR_WIDTH + BAR_GAP, label_width + 8)
    cluster = n_series * slot
    plot_width = max(PANEL_WIDTH_MIN - AXIS_LABEL_SPACE, len(groups) * (cluster + GROUP_GAP))
    panel_width = AXIS_LABEL_SPACE + plot_width
    width = 2 * MARGIN + len(panels) * panel_width + (len(panels) - 1) * PANEL_GAP

    # Title block, then the legend on its own row.
    y = MARGIN + 18
    out = []
    out.append(svg_text(MARGIN, y, title, 18, anchor="start", weight="bold"))
    if subtitle:
        for line in wrap_lines(subtitle, 12.5, width - 2 * MARGIN):
            y += 19
            out.append(svg_text(MARGIN, y, line, 12.5, anchor="start", fill=MUTED))
    y += 26
    x = MARGIN
    for i, name in enumerate(series):
        out.append(
            f'<rect x="{x:.1f}" y="{y - 11}" width="14" height="14" rx="2" '
            f'fill="{PALETTE[i % len(PALETTE)]}"/>'
        )
        out.append(svg_text(x + 20, y, name, 13, anchor="start"))
        x += 20 + text_width(name, 13) + 26
    legend_bottom = y + 8

    label_size = 12.5
    group_label_lines = max(len(wrap(g, label_size, cluster + GROUP_GAP - 6)) for g in groups)
    headings = any(metric for metric, _, _, _ in panels)
    plot_top = legend_bottom + (44 if headings else 26)
    plot_bottom = plot_top + PLOT_HEIGHT
    height = plot_bottom + 14 + 16 * group_label_lines + MARGIN

    for p, (metric, unit, values, texts) in enumerate(panels):
        left = MARGIN + p * (panel_width + PANEL_GAP) + AXIS_LABEL_SPACE
        axis_label = f"{metric} ({unit})" if metric else unit
        # Headroom for the two label lines above the tallest bar.
        top_value, step = nice_ceiling(max(values.values(), default=0.0) * 1.08)

        def y_of(v):
            return plot_bottom - PLOT_HEIGHT * v / top_value

        if metric:
            heading = metric[:1].upper() + metric[1:]
            out.append(svg_text(left, plot_top - 26, heading, 14, anchor="start", weight="bold"))
        # Grid lines with their tick values.
        ticks = int(round(top_value / step))
        for t in range(ticks + 1):
            v = t * step
            ty = y_of(v)
            colour = "#9aa0a8" if t == 0 else GRID
            out.append(
                f'<line x1="{left}" y1="{ty:.1f}" x2="{left + plot_width:.1f}" y2="{ty:.1f}" '
                f'stroke="{colour}" stroke-width="1"/>'
            )
            out.append(
                svg_text(left - 8, ty + 4, format_number(v), 11.5, anchor="end", fill=MUTED)
            )
        # The axis label, rotated, centred on the plot's height.
        cy = (plot_top + plot_bottom) / 2
        ax = left - AXIS_LABEL_SPACE + 14
        out.append(
            svg_text(ax, cy, axis_label, 12, fill=MUTED,
                     extra=f' transform="rotate(-90 {ax:.1f} {cy:.1f})"')
        )
        # Bars with their value labels, then the group labels.
        for g, group in enumerate(groups):
            gx = left + GROUP_GAP / 2 + g * (cluster + GROUP_GAP)
            for s, name in enumerate(series):
                if (group, name) not in values:
                    continue
                v = values[(group, name)]
                cx = gx + s * slot + slot / 2
                by = y_of(v)
                tooltip = f"{group}, {name}: {texts[(group, name)]} {unit}"
                out.append(
                    f'<rect x="{cx - BAR_WIDTH / 2:.1f}" y="{by:.1f}" width="{BAR_WIDTH}" '
                    f'height="{plot_bottom - by:.1f}" fill="{PALETTE[s % len(PALETTE)]}">'
                    f"<title>{escape(tooltip)}</title></rect>"
                )
                lines = value_labels(values, texts, unit, group, name, s == 0, baseline)
                weight = "bold" if s == 0 else "normal"
                for k, line in enumerate(reversed(lines)):
                    out.append(svg_text(cx, by - 6 - 14 * k, line, VALUE_SIZE, weight=weight))
            for k, line in enumerate(wrap(group, label_size, cluster + GROUP_GAP - 6)):
                out.append(
                    svg_text(gx + cluster / 2, plot_bottom + 20 + 16 * k, line, label_size)
                )

    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="{FONT}" role="img">'
    )
    return "\n".join(
        [head, f"<title>{escape(title)}</title>",
         '<rect width="100%" height="100%" fill="#ffffff"/>']
        + out
        + ["</svg>", ""]
    )


def wrap_lines(text, size, width):
    """Greedy word wrap of `text` into lines that fit `width`."""
    lines, current = [], ""
    for word in text.split():
        candidate = f"{current} {word}".strip()
        if current and text_width(candidate, size) > width:
            lines.append(current)
            current = word
        else:
            current = candidate
    if current:
        lines.append(current)
    return lines


def write_atomically(path, text):
    """Writes `text` to `path` through a temporary file in the same folder, renamed into
    place: on failure no file (or the previous one) remains."""
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise InputError(f"{path}: cannot write: folder {folder} does not exist")
    fd, temp = tempfile.mkstemp(prefix=".chart-", suffix=".svg.tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(temp, 0o644)
        os.replace(temp, path)
    except OSError as e:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise InputError(f"{path}: cannot write: {e.strerror or e}") from None


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="chart.py",
        description="Grouped bar chart (SVG) from a benchmark result file "
        "(columns group, series, value, unit[, metric]; tab-separated, or .csv).",
    )
    parser.add_argument("input", help="the result file (.tsv, or .csv)")
    parser.add_argument("--title", required=True, help="the chart's title")
    parser.add_argument("--subtitle", default="", help="a note under the title (machine, runs, ...)")
    parser.add_argument("--baseline", help="label the first series' bars with their ratio to this series")
    parser.add_argument("--output", required=True, help="the SVG file to write")
    args = parser.parse_args(argv)
    try:
        rows = read_rows(args.input)
        panels, groups, series = build_model(rows, args.input, args.baseline)
        svg = render(panels, groups, series, args.title, args.subtitle, args.baseline)
        write_atomically(args.output, svg)
    except InputError as e:
        print(f"chart.py: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
