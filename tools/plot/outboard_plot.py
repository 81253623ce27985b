#!/usr/bin/python3
"""Plots the result documents written by `outboard bench` (schema: src/bench/results.hpp).

    outboard_plot.py RESULT.json [RESULT2.json ...] [--out-dir DIR] [--prefix NAME] [--separate]

Writes, in DIR (default: the directory of the first input):
  PREFIX-throughput.png  MiB/s against message size, every transfer series
  PREFIX-latency.png     time per operation against message size, every transfer series
  PREFIX-gflops.png      GFLOP/s against n, every gemm series (only when there are some)
  PREFIX-phases.png      where the time of one call goes (only when the documents have "phases")

PREFIX defaults to the stem of the input file. With several inputs their series are overlaid in one
set of plots (labels get the file stem; PREFIX defaults to the stems joined by "+"), unless
--separate asks for one set of plots per input (then --prefix may not be given).

Exit status: 0 when the plots were written (their paths are printed, one per line); 2 for a
missing or unreadable file, invalid JSON, a document without any plottable data, or matplotlib
missing.
"""
import argparse
import json
import math
import os
import sys
import textwrap

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib import ticker
except ImportError as e:  # pragma: no cover - depends on the machine
    sys.stderr.write("outboard_plot: matplotlib is not available (%s); on Debian: apt-get install python3-matplotlib\n" % e)
    sys.exit(2)

PHASES = ["to_server", "to_gpu", "plan", "compute", "from_gpu", "from_server"]
PHASE_COLOURS = {
    "to_server": "#1f77b4",
    "to_gpu": "#17becf",
    "plan": "#bcbd22",
    "compute": "#d62728",
    "from_gpu": "#9467bd",
    "from_server": "#7f7f7f",
}
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "<", ">", "h", "*", "p"]
FIGSIZE = (10, 6)
DPI = 120


class UsageError(Exception):
    """A problem with the inputs; reported with exit status 2."""


# ---------------------------------------------------------------------------------------------
# Reading the documents


def positive(v):
    """v as a float when it is a finite number > 0, else None (covers null, strings, NaN, 0)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    v = float(v)
    if not math.isfinite(v) or v <= 0:
        return None
    return v


def nonnegative(v):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return 0.0
    v = float(v)
    return v if math.isfinite(v) and v > 0 else 0.0


class Run:
    """One input document, reduced to what can be plotted."""

    def __init__(self, path, doc):
        self.path = path
        self.stem = os.path.splitext(os.path.basename(path))[0]
        self.doc = doc
        self.transfers = []  # (series dict, [(bytes, seconds, mib_per_s)])
        self.gemms = []  # (series dict, [(n, gflops)], [(n, gflops_compute)])
        self.ffts = []  # (series dict, [(points, gflops)], [(points, gflops of the first execution)])
        self.phases = []  # (name, {phase: seconds})
        self.skipped = []  # messages about series without usable points
        series = doc.get("series")
        if series is None:
            series = []
        if not isinstance(series, list):
            raise UsageError("%s: \"series\" is not a list" % path)
        for i, s in enumerate(series):
            if not isinstance(s, dict):
                continue
            name = str(s.get("name") or "series %d" % (i + 1))
            s = dict(s, name=name)
            points = s.get("points") if isinstance(s.get("points"), list) else []
            kind = s.get("kind")
            if kind == "transfer":
                pts = self._transfer_points(points)
                if pts:
                    self.transfers.append((s, pts))
                else:
                    self.skipped.append("transfer series \"%s\" has no usable points" % name)
            elif kind == "gemm":
                total, compute = self._gemm_points(points, s.get("precision"))
                if total or compute:
                    self.gemms.append((s, total, compute))
                else:
                    self.skipped.append("gemm series \"%s\" has no usable points" % name)
            elif kind == "fft":
                steady, first = self._fft_points(points)
                if steady or first:
                    self.ffts.append((s, steady, first))
                else:
                    self.skipped.append("fft series \"%s\" has no usable points" % name)
        phases = doc.get("phases")
        if isinstance(phases, list):
            for i, p in enumerate(phases):
                if not isinstance(p, dict):
                    continue
                segs = {k: nonnegative(p.get(k)) for k in PHASES}
                if sum(segs.values()) > 0:
                    self.phases.append((str(p.get("name") or "entry %d" % (i + 1)), segs))

    @staticmethod
    def _transfer_points(points):
        out = []
        for p in points:
            if not isinstance(p, dict):
                continue
            b, sec = positive(p.get("bytes")), positive(p.get("seconds"))
            if b is None or sec is None:
                continue
            mib = positive(p.get("mib_per_s")) or b / sec / (1 << 20)
            out.append((b, sec, mib))
        out.sort(key=lambda t: t[0])
        return out

    @staticmethod
    def _gemm_points(points, precision):
        # Floating-point operations of an n x n x n product: 2 n^3 real, 8 n^3 complex.
        per_n3 = 8.0 if precision in ("c", "z") else 2.0
        total, compute = [], []
        for p in points:
            if not isinstance(p, dict):
                continue
            n = positive(p.get("n"))
            if n is None:
                continue
            sec = positive(p.get("seconds"))
            if sec is not None:
                g = positive(p.get("gflops")) or per_n3 * n ** 3 / sec / 1e9
                total.append((n, g))
            csec = positive(p.get("compute_seconds"))
            if csec is not None:
                g = positive(p.get("gflops_compute")) or per_n3 * n ** 3 / csec / 1e9
                compute.append((n, g))
        total.sort()
        compute.sort()
        return total, compute

    @staticmethod
    def _fft_points(points):
        # GFLOP/s as the documents give them (FFTW's 5 N log2 N convention); points = N.
        steady, first = [], []
        for p in points:
            if not isinstance(p, dict):
                continue
            n = positive(p.get("n"))
            if n is None:
                continue
            g = positive(p.get("gflops"))
            if g is not None:
                steady.append((n, g))
            g = positive(p.get("gflops_first"))
            if g is not None:
                first.append((n, g))
        steady.sort()
        first.sort()
        return steady, first

    def plottable(self):
        return bool(self.transfers or self.gemms or self.ffts or self.phases)

    def describe(self):
        """'mode, host, GPU' for titles."""
        parts = []
        mode = self.doc.get("mode")
        if mode:
            parts.append("mode %s" % mode)
        machine = self.doc.get("machine") if isinstance(self.doc.get("machine"), dict) else {}
        if machine.get("hostname"):
            parts.append("host %s" % machine["hostname"])
        gpu = gpu_names(machine)
        if gpu:
            parts.append("GPU %s" % gpu)
        return ", ".join(parts)


def gpu_names(machine):
    """The GPU description of a machine object, whatever shape it has ("gpu"/"gpus", strings or
    objects with a "name")."""
    names = []
    for key in ("gpu", "gpus", "gpu_name", "devices"):
        v = machine.get(key)
        for item in v if isinstance(v, list) else [v]:
            if isinstance(item, dict):
                item = item.get("name") or item.get("model")
            if isinstance(item, str) and item.strip():
                names.append(item.strip())
        if names:
            break
    if not names:
        return ""
    # "4x NVIDIA H200" rather than the same name four times
    out = []
    for n in dict.fromkeys(names):
        c = names.count(n)
        out.append("%dx %s" % (c, n) if c > 1 else n)
    return ", ".join(out)


def load(path):
    try:
        with open(path, "r", encoding="utf-8") as f:
            doc = json.load(f)
    except FileNotFoundError:
        raise UsageError("%s: no such file" % path)
    except IsADirectoryError:
        raise UsageError("%s: is a directory, not a result file" % path)
    except OSError as e:
        raise UsageError("%s: cannot read: %s" % (path, e.strerror or e))
    except (ValueError, UnicodeDecodeError) as e:
        raise UsageError("%s: not valid JSON: %s" % (path, e))
    if not isinstance(doc, dict):
        raise UsageError("%s: not an `outboard bench` result document (top level is not an object)" % path)
    run = Run(path, doc)
    if not run.plottable():
        why = "; ".join(run.skipped) if run.skipped else "no transfer or gemm series and no phases"
        raise UsageError("%s: nothing to plot (%s)" % (path, why))
    return run


# ---------------------------------------------------------------------------------------------
# Axis formatting


def fmt_num(v):
    """Up to 3 significant digits, no exponent for ordinary magnitudes."""
    if v == 0:
        return "0"
    if abs(v) >= 1e6 or abs(v) < 1e-3:
        e = int(math.floor(math.log10(abs(v)) + 1e-9))
        m = v / 10 ** e
        return ("10$^{%d}$" % e) if abs(m - 1) < 1e-6 else ("%g$\\times$10$^{%d}$" % (round(m, 2), e))
    s = "%.3g" % v
    if "e" in s:
        s = "%d" % round(v)
    if abs(v) >= 10000:
        s = "{:,}".format(int(round(v))).replace(",", "\u2009")
    return s


def fmt_bytes(v, _pos=None):
    if v <= 0:
        return ""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if v >= 1 << shift:
            return "%s %s" % (fmt_num(v / (1 << shift)), unit)
    return "%s B" % fmt_num(v)


def fmt_us(v, _pos=None):
    """A time given in microseconds, in the most readable unit."""
    if v <= 0:
        return ""
    if v < 1:
        return "%s ns" % fmt_num(v * 1e3)
    if v < 1e3:
        return "%s µs" % fmt_num(v)
    if v < 1e6:
        return "%s ms" % fmt_num(v / 1e3)
    return "%s s" % fmt_num(v / 1e6)


def fmt_plain(v, _pos=None):
    return fmt_num(v) if v > 0 else ""


def bytes_axis(ax, lo, hi):
    """Log2 axis for message sizes: labelled ticks on powers of two at a step of 1, 2, 5 or 10
    octaves (so 1 KiB, 1 MiB and 1 GiB are labelled whenever the step is larger than 1), a minor
    tick on every other power of two."""
    ax.set_xscale("log", base=2)
    e_lo = int(math.floor(math.log2(lo)))
    e_hi = int(math.ceil(math.log2(hi)))
    if e_hi == e_lo:
        e_hi += 1
    span = e_hi - e_lo
    step = next((s for s in (1, 2, 5, 10) if span / s <= 11), 10)
    first = int(math.ceil(e_lo / step) * step)
    major = [2.0 ** e for e in range(first, e_hi + 1, step)]
    minor = [2.0 ** e for e in range(e_lo, e_hi + 1)]
    ax.xaxis.set_major_locator(ticker.FixedLocator(major))
    ax.xaxis.set_minor_locator(ticker.FixedLocator(minor))
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(fmt_bytes))
    ax.xaxis.set_minor_formatter(ticker.NullFormatter())
    ax.set_xlim(lo / 2 ** 0.4, hi * 2 ** 0.4)
    if len(major) > 8:
        for label in ax.get_xticklabels():
            label.set_rotation(30)
            label.set_ha("right")


def log10_axis(axis, lo, hi, formatter):
    """Log10 axis labelled with `formatter`; with a narrow range the labels go on 1-2-5 (or every
    integer) multiples so that there are always a few."""
    decades = math.log10(hi / lo) if hi > lo else 0
    if decades < 0.6:
        # Less than a factor of 4: evenly spaced round values read better than log ticks.
        axis.set_major_locator(ticker.MaxNLocator(nbins=6, steps=[1, 2, 2.5, 5, 10]))
        axis.set_minor_locator(ticker.NullLocator())
        axis.set_major_formatter(ticker.FuncFormatter(formatter))
        axis.set_minor_formatter(ticker.NullFormatter())
        return
    if decades < 1.5:
        subs = (1, 2, 3, 5, 7)
    elif decades < 3.5:
        subs = (1, 2, 5)
    else:
        subs = (1.0,)
    axis.set_major_locator(ticker.LogLocator(base=10, subs=subs, numticks=30))
    axis.set_minor_locator(ticker.LogLocator(base=10, subs=tuple(range(1, 10)), numticks=30))
    axis.set_major_formatter(ticker.FuncFormatter(formatter))
    axis.set_minor_formatter(ticker.NullFormatter())


def padded_log_limits(lo, hi):
    """Limits a little outside [lo, hi]: about 6 % of the span on each side in log space."""
    if hi <= lo * 1.01:
        return lo / 1.5, hi * 1.5
    pad = min(1.3, max(1.03, (hi / lo) ** 0.06))
    return lo / pad, hi * pad


def legend_below(ax, handles=None, labels=None, extra_rows=0):
    """A legend under the axes, so that it never covers data."""
    if handles is None:
        handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return None
    longest = max(len(l) for l in labels)
    ncol = max(1, min(len(labels), int(100 // max(12, longest + 6)), 4))
    offset = -0.13 - 0.05 * extra_rows
    return ax.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, offset), ncol=ncol,
                     fontsize="small", frameon=False)


def colours(count):
    cmap = plt.get_cmap("tab10" if count <= 10 else "tab20")
    n = 10 if count <= 10 else 20
    return [cmap(i % n) for i in range(count)]


def title_for(runs, what):
    descs = list(dict.fromkeys(r.describe() for r in runs if r.describe()))
    head = "outboard bench: %s" % what
    if not descs:
        return head
    body = " | ".join(descs)
    return head + "\n" + "\n".join(textwrap.wrap(body, 110))


def save(fig, path, written):
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    plt.close(fig)
    written.append(path)


# ---------------------------------------------------------------------------------------------
# The plots


def label_for(run, series, many, suffix=""):
    label = series["name"] + suffix
    return "%s (%s)" % (label, run.stem) if many else label


def plot_transfers(runs, prefix, written):
    items = [(r, s, pts) for r in runs for (s, pts) in r.transfers]
    if not items:
        return
    many = len(runs) > 1
    cols = colours(len(items))
    all_b = [p[0] for (_, _, pts) in items for p in pts]
    bmin, bmax = min(all_b), max(all_b)
    small = sum(len(pts) for (_, _, pts) in items) > 300

    # Throughput
    fig, ax = plt.subplots(figsize=FIGSIZE)
    for i, (r, s, pts) in enumerate(items):
        ax.plot([p[0] for p in pts], [p[2] for p in pts], color=cols[i], marker=MARKERS[i % len(MARKERS)],
                markersize=2.5 if small else 3.5, linewidth=1.0, label=label_for(r, s, many))
    ys = [p[2] for (_, _, pts) in items for p in pts]
    ax.set_yscale("log")
    ylo, yhi = padded_log_limits(min(ys), max(ys))
    ax.set_ylim(ylo, yhi)
    log10_axis(ax.yaxis, ylo, yhi, fmt_plain)
    bytes_axis(ax, bmin, bmax)
    ax.set_xlabel("message size (bytes, log scale)")
    ax.set_ylabel("throughput (MiB/s, log scale)")
    # Network people think in Mbit/s: the same scale on the right.
    mbit = 8 * (1 << 20) / 1e6
    sec = ax.secondary_yaxis("right", functions=(lambda v: v * mbit, lambda v: v / mbit))
    sec.set_yscale("log")
    log10_axis(sec.yaxis, ylo * mbit, yhi * mbit, fmt_plain)
    sec.set_ylabel("Mbit/s")
    ax.grid(True, which="major", alpha=0.4)
    ax.grid(True, which="minor", alpha=0.12)
    ax.set_title(title_for([r for r in runs if r.transfers], "throughput"), fontsize="medium")
    legend_below(ax, extra_rows=1 if len(ax.get_xticks()) > 8 else 0)
    save(fig, prefix + "-throughput.png", written)

    # Time per operation
    fig, ax = plt.subplots(figsize=FIGSIZE)
    for i, (r, s, pts) in enumerate(items):
        pattern = s.get("pattern")
        ax.plot([p[0] for p in pts], [p[1] * 1e6 for p in pts], color=cols[i], marker=MARKERS[i % len(MARKERS)],
                markersize=2.5 if small else 3.5, linewidth=1.0,
                label=label_for(r, s, many, " [%s]" % pattern if pattern else ""))
    ys = [p[1] * 1e6 for (_, _, pts) in items for p in pts]
    ax.set_yscale("log")
    ylo, yhi = padded_log_limits(min(ys), max(ys))
    ax.set_ylim(ylo, yhi)
    log10_axis(ax.yaxis, ylo, yhi, fmt_us)
    bytes_axis(ax, bmin, bmax)
    ax.set_xlabel("message size (bytes, log scale)")
    ax.set_ylabel("time per operation (log scale; ns, µs, ms, s)")
    ax.grid(True, which="major", alpha=0.4)
    ax.grid(True, which="minor", alpha=0.12)
    ax.set_title(title_for([r for r in runs if r.transfers], "time per operation (one-way)"), fontsize="medium")
    legend_below(ax, extra_rows=1 if len(ax.get_xticks()) > 8 else 0)
    save(fig, prefix + "-latency.png", written)


def gemm_details(series):
    """' [d, remote]' for what the series name does not already say."""
    name = series["name"].lower()
    extra = []
    precision, where = series.get("precision"), series.get("where")
    if isinstance(precision, str) and precision and (precision.lower() + "gemm") not in name:
        extra.append(precision)
    if isinstance(where, str) and where and where.lower() not in name:
        extra.append(where)
    return " [%s]" % ", ".join(extra) if extra else ""


def same_curve(a, b):
    if len(a) != len(b):
        return False
    return all(na == nb and abs(ga - gb) <= 1e-9 * max(ga, gb) for (na, ga), (nb, gb) in zip(a, b))


def plot_gemm(runs, prefix, written):
    items = [(r, s, tot, comp) for r in runs for (s, tot, comp) in r.gemms]
    if not items:
        return
    many = len(runs) > 1
    cols = colours(len(items))
    npoints = max(len(tot) + len(comp) for (_, _, tot, comp) in items)
    ms = 2.0 if npoints > 60 else 3.5
    fig, ax = plt.subplots(figsize=FIGSIZE)
    handles, labels = [], []
    any_compute = False
    for i, (r, s, tot, comp) in enumerate(items):
        if same_curve(tot, comp):
            comp = []  # no transfers to leave out (local runs): one line is enough
        label = label_for(r, s, many, gemm_details(s))
        if tot:
            h, = ax.plot([p[0] for p in tot], [p[1] for p in tot], color=cols[i], linestyle="-", linewidth=0.8,
                         marker="o", markersize=ms)
            handles.append(h)
            labels.append(label + (": with transfers" if comp else ""))
        if comp:
            any_compute = True
            h, = ax.plot([p[0] for p in comp], [p[1] for p in comp], color=cols[i], linestyle="--", linewidth=0.8,
                         marker="x" if ms > 2.5 else ".", markersize=ms + 1)
            handles.append(h)
            labels.append(label + ": compute only")
    ax.set_xlabel("matrix size n (n × n × n product)")
    ax.set_ylabel("GFLOP/s")
    gs = [p[1] for (_, _, tot, comp) in items for p in tot + comp]
    ax.set_ylim(0, max(gs) * 1.06)
    ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _p: fmt_num(v) if v > 0 else "0"))
    ns = [p[0] for (_, _, tot, comp) in items for p in tot + comp]
    lo, hi = min(ns), max(ns)
    pad = max(8.0, (hi - lo) * 0.02)
    ax.set_xlim(max(0.0, lo - pad), hi + pad)
    if all(float(v).is_integer() and int(v) % 8 == 0 for v in ns):
        # BLAS sizes: ticks on multiples of a power of two (64, 128, 256, ...) where the tile
        # effects show up.
        step = 8
        while (hi - lo) / step > 10:
            step *= 2
        ax.xaxis.set_major_locator(ticker.MultipleLocator(step))
    else:
        ax.xaxis.set_major_locator(ticker.MaxNLocator(nbins=10, integer=True))
    ax.grid(True, alpha=0.35)
    what = "GEMM rate"
    if any_compute:
        what += " (solid: with transfers, dashed: compute only)"
    ax.set_title(title_for([r for r in runs if r.gemms], what), fontsize="medium")
    legend_below(ax, handles, labels)
    save(fig, prefix + "-gflops.png", written)


def plot_fft(runs, prefix, written):
    items = [(r, s, steady, first) for r in runs for (s, steady, first) in r.ffts]
    if not items:
        return
    many = len(runs) > 1
    cols = colours(len(items))
    fig, ax = plt.subplots(figsize=FIGSIZE)
    handles, labels = [], []
    for i, (r, s, steady, first) in enumerate(items):
        label = label_for(r, s, many)
        if steady:
            h, = ax.plot([p[0] for p in steady], [p[1] for p in steady], color=cols[i], linestyle="-", linewidth=0.8,
                         marker="o", markersize=3)
            handles.append(h)
            labels.append(label)
        if first:
            h, = ax.plot([p[0] for p in first], [p[1] for p in first], color=cols[i], linestyle=":", linewidth=0.8,
                         marker=".", markersize=3)
            handles.append(h)
            labels.append(label + ": first execution, plan included")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("points per transform (N)")
    ax.set_ylabel("GFLOP/s (5 N log2 N per transform)")
    ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _p: fmt_num(v) if v > 0 else "0"))
    ax.grid(True, which="both", alpha=0.35)
    ax.set_title(title_for([r for r in runs if r.ffts], "FFT rate (solid: ready plan, dotted: first execution)"),
                 fontsize="medium")
    legend_below(ax, handles, labels)
    save(fig, prefix + "-fft-gflops.png", written)


def plot_phases(runs, prefix, written):
    many = len(runs) > 1
    entries = [("%s (%s)" % (name, r.stem) if many else name, segs) for r in runs for (name, segs) in r.phases]
    if not entries:
        return
    height = min(12.0, max(3.2, 1.6 + 0.45 * len(entries)))
    fig, ax = plt.subplots(figsize=(FIGSIZE[0], height))
    ys = list(range(len(entries)))
    left = [0.0] * len(entries)
    for k in PHASES:  # every phase is in the legend, in this order, even when it took no time
        widths = [segs[k] * 1e3 for (_, segs) in entries]
        ax.barh(ys, widths, left=left, height=0.6, color=PHASE_COLOURS[k], label=k, edgecolor="white",
                linewidth=0.5)
        left = [l + w for l, w in zip(left, widths)]
    total_max = max(left)
    for y, total in zip(ys, left):
        ax.text(total + total_max * 0.01, y, fmt_us(total * 1e3), va="center", fontsize="small")
    ax.set_yticks(ys)
    ax.set_yticklabels([name for (name, _) in entries])
    ax.invert_yaxis()
    ax.set_xlim(0, total_max * 1.12)
    ax.set_xlabel("time (ms)")
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _p: fmt_num(v) if v > 0 else "0"))
    ax.grid(True, axis="x", alpha=0.35)
    ax.set_axisbelow(True)
    ax.set_title(title_for([r for r in runs if r.phases], "where the time goes"), fontsize="medium")
    handles, labels = ax.get_legend_handles_labels()
    axes_inches = height * (fig.subplotpars.top - fig.subplotpars.bottom)
    ax.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, -0.55 / axes_inches), ncol=len(labels),
              fontsize="small", frameon=False)
    save(fig, prefix + "-phases.png", written)


def plot(runs, prefix):
    written = []
    plot_transfers(runs, prefix, written)
    plot_gemm(runs, prefix, written)
    plot_fft(runs, prefix, written)
    plot_phases(runs, prefix, written)
    return written


# ---------------------------------------------------------------------------------------------


def main(argv):
    ap = argparse.ArgumentParser(
        prog="outboard_plot.py",
        description="Plots `outboard bench` result documents (JSON) as PNG files.",
        epilog="Exit status: 0 on success (the files written are printed), 2 for a missing or invalid "
        "file or a document with nothing to plot.")
    ap.add_argument("inputs", nargs="+", metavar="RESULT.json", help="result documents; several are overlaid")
    ap.add_argument("--out-dir", metavar="DIR", help="where to write (default: beside the first input)")
    ap.add_argument("--prefix", metavar="NAME", help="file name prefix (default: the input's stem)")
    ap.add_argument("--separate", action="store_true", help="with several inputs, one set of plots per input")
    args = ap.parse_args(argv)
    if args.separate and args.prefix and len(args.inputs) > 1:
        raise UsageError("--prefix cannot be given with --separate and several inputs")

    runs = [load(p) for p in args.inputs]
    for r in runs:
        for msg in r.skipped:
            sys.stderr.write("outboard_plot: %s: warning: %s\n" % (r.path, msg))

    if args.out_dir:
        try:
            os.makedirs(args.out_dir, exist_ok=True)
        except OSError as e:
            raise UsageError("%s: cannot create the output directory: %s" % (args.out_dir, e.strerror or e))

    groups = [[r] for r in runs] if args.separate else [runs]
    written = []
    for group in groups:
        if args.prefix:
            name = args.prefix
        elif len(group) == 1:
            name = group[0].stem
        else:
            name = "+".join(r.stem for r in group)
            if len(name) > 80:
                name = "%s+%d-more" % (group[0].stem, len(group) - 1)
        directory = args.out_dir or os.path.dirname(os.path.abspath(group[0].path))
        try:
            written += plot(group, os.path.join(directory, name))
        except OSError as e:
            raise UsageError("cannot write the plots: %s" % e)
    for w in written:
        print(w)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except UsageError as e:
        sys.stderr.write("outboard_plot: error: %s\n" % e)
        sys.exit(2)
