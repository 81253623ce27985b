#!/usr/bin/env python3
"""Checks the Grafana dashboard (packaging/grafana/outboard-dashboard.json) against a server's
/metrics text (grafana_dashboard.sh scrapes it after driving calls of every kind).

  grafana_dashboard_check.py DASHBOARD SCRAPE [--unseen-ok LABEL=VALUE ...] [--prometheus URL INSTANCE]

Fails, saying which panel and which name, when
  - the dashboard is not valid JSON, its schemaVersion is below 36, it lacks the data source
    variable (type datasource, query prometheus) or the `instance` variable (label_values of an
    Outboard series);
  - a panel's id is not unique, a panel (or one of its targets) has a data source other than the
    variable, a panel has no title, description or query, or panels overlap on the grid;
  - a query (panels' targets, the variables', the annotations') names a metric the server does not
    expose: the names in the scrape, and for a histogram its _bucket, _sum and _count series;
    families the server declares without samples (the GPU series on a server without GPUs) count,
    and so does Prometheus's own per-target `up`;
  - a label matcher with a literal value names a label or a value no sample of that series has
    (LABEL=VALUE after --unseen-ok: a value the test could not drive here, such as service=opencl
    without PoCL), a `by (...)` or a legend's {{label}} names a label the series do not have, or a
    query uses a variable the dashboard does not define.
With --prometheus, every query is also run on that Prometheus (which scrapes the server as
INSTANCE): it must be valid PromQL and, where its series have samples, answer something.
"""
import json
import re
import sys
import urllib.parse
import urllib.request
from collections import defaultdict

from prometheus_client.parser import text_string_to_metric_families

PROMETHEUS_OWN = {"up", "scrape_duration_seconds", "scrape_samples_scraped",
                  "scrape_samples_post_metric_relabeling", "scrape_series_added"}  # per target, by Prometheus
TARGET_LABELS = {"instance", "job"}  # added by Prometheus at scrape time
BUILTIN_VARIABLES = {"__rate_interval", "__interval", "__interval_ms", "__range", "__range_s", "__range_ms",
                     "__dashboard", "__from", "__to", "__name", "__org", "__user", "timeFilter"}
AGGREGATIONS = {"sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values", "bottomk",
                "topk", "quantile", "limitk", "limit_ratio"}
LABEL_LIST_WORDS = {"by", "without", "on", "ignoring", "group_left", "group_right"}
OTHER_WORDS = {"and", "or", "unless", "bool", "offset", "atan2", "inf", "nan", "Inf", "NaN"}
IDENT = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
STRING = r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`'
MATCHER = re.compile(r"\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*(" + STRING + r")\s*(?:,|$)")
VARIABLE = re.compile(r"\$(?:\{(\w+)(?::\w+)?\}|(\w+))")

errors = []


def error(where, why):
    errors.append(f"{where}: {why}")


class Query:
    """What the checks need of one PromQL expression: its selectors (metric name or None, label
    matchers), the labels of its `by (...)` clauses, whether it aggregates, the variables it uses."""

    def __init__(self, expr):
        self.expr = expr
        self.selectors = []  # [name or None, [(label, op, value)]]
        self.by = set()
        self.aggregates = False
        self.variables = {a or b for a, b in VARIABLE.findall(expr)}
        self._parse(expr)

    def _parse(self, e):
        i, n, last_was_name = 0, len(e), False
        while i < n:
            c = e[i]
            if c.isspace():
                i += 1
                continue
            if c in "\"'`":
                m = re.compile(STRING).match(e, i)
                if not m:
                    raise ValueError(f"unterminated string at {i}")
                i, last_was_name = m.end(), False
            elif c == "$":
                m = VARIABLE.match(e, i)
                i, last_was_name = (m.end() if m else i + 1), False
            elif c == "[":  # a range or subquery: durations and variables only
                j = e.find("]", i)
                if j < 0:
                    raise ValueError("unclosed [")
                i, last_was_name = j + 1, False
            elif c == "{":
                j, body = i + 1, ""
                while j < n and e[j] != "}":  # up to the closing brace, strings skipped whole
                    m = re.compile(STRING).match(e, j)
                    body += m[0] if m else e[j]
                    j = m.end() if m else j + 1
                if j >= n:
                    raise ValueError("unclosed {")
                matchers, pos = [], 0
                body = body.strip()
                while pos < len(body):
                    m = MATCHER.match(body, pos)
                    if not m:
                        raise ValueError(f"cannot read the label matchers {{{body}}}")
                    value = m[3][1:-1]
                    matchers.append((m[1], m[2], value))
                    pos = m.end()
                if last_was_name:
                    self.selectors[-1][1] = matchers
                else:  # {__name__="..."}
                    names = [v for l, op, v in matchers if l == "__name__" and op == "="]
                    self.selectors.append([names[0] if names else None, matchers])
                i, last_was_name = j + 1, False
            elif c.isdigit() or (c == "." and i + 1 < n and e[i + 1].isdigit()):
                m = re.compile(r"[0-9.]+(?:[eE][+-]?[0-9]+)?[a-zA-Z]*").match(e, i)  # a number or duration
                i, last_was_name = m.end(), False
            elif m := IDENT.match(e, i):
                word, j = m[0], m.end()
                k = j
                while k < n and e[k].isspace():
                    k += 1
                following = e[k] if k < n else ""
                last_was_name = False
                if word in LABEL_LIST_WORDS:
                    if following == "(":
                        close = e.find(")", k)
                        if close < 0:
                            raise ValueError(f"unclosed {word} (")
                        labels = {l.strip() for l in e[k + 1:close].split(",") if l.strip()}
                        if word == "by":
                            self.by |= labels
                        j = close + 1
                    if word in ("by", "without"):
                        self.aggregates = True
                elif word in OTHER_WORDS:
                    pass
                elif following == "(":  # a function or an aggregation
                    self.aggregates |= word in AGGREGATIONS
                elif word in AGGREGATIONS and e[k:k + 2] in ("by", "wi"):
                    self.aggregates = True
                else:
                    self.selectors.append([word, []])
                    last_was_name = True
                i = j
            else:  # operators, parentheses, commas
                i, last_was_name = i + 1, False


def load_scrape(path):
    text = open(path).read()
    families = list(text_string_to_metric_families(text))  # raises on text that is not Prometheus's format
    declared = {}  # the names a query may use -> the family's TYPE
    for line in text.splitlines():
        if m := re.match(r"# TYPE (\S+) (\S+)$", line):
            name, kind = m[1], m[2]
            if kind == "histogram":
                for suffix in ("_bucket", "_sum", "_count"):
                    declared[name + suffix] = kind
            elif kind == "summary":
                for suffix in ("", "_sum", "_count"):
                    declared[name + suffix] = kind
            else:
                declared[name] = kind
    samples = defaultdict(list)  # sample name -> label sets
    histograms = set()
    for f in families:
        if f.type == "histogram":
            histograms.add(f.name)
        for s in f.samples:
            samples[s.name].append(s.labels)
            declared.setdefault(s.name, f.type)
    return declared, samples, histograms


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        sys.exit(__doc__)
    dashboard_path, scrape_path = args[0], args[1]
    unseen_ok, prometheus = set(), None
    rest = args[2:]
    while rest:
        if rest[0] == "--unseen-ok" and len(rest) > 1:
            unseen_ok.add(tuple(rest[1].split("=", 1)))
            rest = rest[2:]
        elif rest[0] == "--prometheus" and len(rest) > 2:
            prometheus = (rest[1].rstrip("/"), rest[2])
            rest = rest[3:]
        else:
            sys.exit(f"unknown argument {rest[0]}\n{__doc__}")

    try:
        dash = json.load(open(dashboard_path))
    except json.JSONDecodeError as e:
        sys.exit(f"{dashboard_path}: not valid JSON: {e}")
    declared, samples, histograms = load_scrape(scrape_path)

    # ---- the dashboard's frame: schema, variables
    if not isinstance(dash.get("schemaVersion"), int) or dash["schemaVersion"] < 36:
        error("dashboard", f"schemaVersion {dash.get('schemaVersion')!r}: 36 or later wanted")
    for key in ("title", "uid"):
        if not dash.get(key):
            error("dashboard", f"no {key}")
    variables = {v.get("name"): v for v in dash.get("templating", {}).get("list", [])}
    ds_vars = [n for n, v in variables.items() if v.get("type") == "datasource" and v.get("query") == "prometheus"]
    if not ds_vars:
        error("templating", "no data source variable (type datasource, query prometheus)")
    ds_refs = {f"${n}" for n in ds_vars} | {f"${{{n}}}" for n in ds_vars}

    def refers_to_variable(ds):
        if isinstance(ds, str):
            return ds in ds_refs
        return isinstance(ds, dict) and ds.get("uid") in ds_refs and ds.get("type", "prometheus") == "prometheus"

    queries = []  # (where, expr, legend or None, kind)
    instance = variables.get("instance")
    for name, v in variables.items():
        if v.get("type") != "query":
            continue
        if not refers_to_variable(v.get("datasource")):
            error(f"variable {name}", f"data source {v.get('datasource')!r} is not the data source variable")
        q = v.get("query")
        q = q.get("query", "") if isinstance(q, dict) else (q or "")
        for text in {q, v.get("definition") or q}:
            m = re.fullmatch(r"\s*label_values\((.*),\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)\s*", text, re.S)
            if not m:
                error(f"variable {name}", f"query {text!r} is not label_values(SERIES, LABEL)")
                continue
            queries.append((f"variable {name}", m[1], None, ("label_values", m[2])))
    if not instance:
        error("templating", "no `instance` variable")
    elif not re.fullmatch(r"\s*label_values\(\s*outboard_\w+.*,\s*instance\s*\)\s*",
                          (instance.get("query") or {}).get("query", "") if isinstance(instance.get("query"), dict)
                          else instance.get("query") or ""):
        error("variable instance", "not label_values(an Outboard series, instance)")
    for a in dash.get("annotations", {}).get("list", []):
        if a.get("builtIn"):
            continue
        if not refers_to_variable(a.get("datasource")):
            error(f"annotation {a.get('name')!r}", "data source is not the data source variable")
        if a.get("expr"):
            queries.append((f"annotation {a.get('name')!r}", a["expr"], None, "annotation"))

    # ---- panels: ids, data sources, descriptions, grid
    def flatten(panels):
        for p in panels:
            yield p
            yield from flatten(p.get("panels", []))

    panels = list(flatten(dash.get("panels", [])))
    if not panels:
        error("dashboard", "no panels")
    ids = defaultdict(list)
    for p in panels:
        ids[p.get("id")].append(p.get("title"))
    for pid, titles in ids.items():
        if not isinstance(pid, int):
            error(f"panels {titles}", f"id {pid!r} is not an integer")
        elif len(titles) > 1:
            error(f"panels {titles}", f"share the id {pid}")
    cells = {}
    for p in dash.get("panels", []):  # the grid: top-level panels, rows' open contents among them
        g = p.get("gridPos") or {}
        if not all(isinstance(g.get(k), int) for k in "xywh") or g["x"] < 0 or g["x"] + g["w"] > 24:
            error(f"panel {p.get('title')!r}", f"gridPos {g} is not within the 24 columns")
            continue
        for x in range(g["x"], g["x"] + g["w"]):
            for y in range(g["y"], g["y"] + g["h"]):
                if (x, y) in cells:
                    error(f"panel {p.get('title')!r}", f"overlaps panel {cells[(x, y)]!r}")
                    break
                cells[(x, y)] = p.get("title")
            else:
                continue
            break
    rows = queried = 0
    for p in panels:
        where = f"panel {p.get('title')!r} (id {p.get('id')})"
        if p.get("type") == "row":
            rows += 1
            if not p.get("title"):
                error(where, "a row without a title")
            continue
        queried += 1
        if not p.get("title"):
            error(where, "no title")
        if not (p.get("description") or "").strip():
            error(where, "no description")
        if not refers_to_variable(p.get("datasource")):
            error(where, f"data source {p.get('datasource')!r} is not the data source variable ({', '.join(sorted(ds_refs))})")
        targets = p.get("targets") or []
        if not targets:
            error(where, "no query")
        refs = [t.get("refId") for t in targets]
        if len(set(refs)) != len(refs):
            error(where, f"refIds repeat: {refs}")
        for t in targets:
            if "datasource" in t and not refers_to_variable(t["datasource"]):
                error(where, f"target {t.get('refId')}: data source {t['datasource']!r} is not the data source variable")
            if not (t.get("expr") or "").strip():
                error(where, f"target {t.get('refId')}: no expr")
                continue
            queries.append((where, t["expr"], t.get("legendFormat"), "panel"))

    # ---- every query's metrics, labels and variables
    names_used = set()
    own_used, no_samples = set(), set()
    for where, expr, legend, kind in queries:
        try:
            q = Query(expr)
        except ValueError as e:
            error(where, f"cannot read {expr!r}: {e}")
            continue
        for v in q.variables - BUILTIN_VARIABLES - set(variables):
            error(where, f"uses ${v}, which the dashboard does not define")
        if not q.selectors:
            error(where, f"no series in {expr!r}")
        labels_here = set()  # the labels the query's series have (None: unknown, no samples)
        known = True
        for name, matchers in q.selectors:
            if name is None:
                error(where, f"a selector without a metric name in {expr!r}")
                continue
            names_used.add(name)
            if name in PROMETHEUS_OWN:
                own_used.add(name)
                labels_here |= TARGET_LABELS
                continue
            if name not in declared:
                hint = " (a histogram: query its _bucket, _sum or _count)" if name in histograms else ""
                error(where, f"the server exposes no series named {name}{hint}")
                known = False
                continue
            have = samples.get(name)
            if not have:
                no_samples.add(name)
                known = False
                continue
            have_labels = set().union(*(set(s) for s in have))
            labels_here |= have_labels | TARGET_LABELS
            for label, op, value in matchers:
                if label in TARGET_LABELS or label == "__name__":
                    continue
                if label not in have_labels:
                    error(where, f"{name} has no label {label!r} (it has {sorted(have_labels)})")
                elif op == "=" and "$" not in value and not any(s.get(label) == value for s in have) \
                        and (label, value) not in unseen_ok:
                    error(where, f"no {name} sample has {label}={value!r} "
                                 f"(seen: {sorted({s.get(label) for s in have if label in s})})")
        if kind == "annotation" or not known:
            continue
        if isinstance(kind, tuple):  # label_values(SERIES, LABEL)
            if kind[1] not in labels_here:
                error(where, f"label_values of a label its series do not have: {kind[1]!r}")
            continue
        for label in q.by - labels_here:
            error(where, f"by ({label}): no such label on {sorted({n for n, _ in q.selectors})}")
        result_labels = q.by if q.aggregates else labels_here
        for label in re.findall(r"\{\{\s*(\w+)\s*\}\}", legend or ""):
            if label not in result_labels:
                error(where, f"the legend's {{{{{label}}}}} is not a label of the result ({sorted(result_labels)})")

    # ---- optionally, every query run on a real Prometheus that scrapes the server
    ran = 0
    if prometheus and not errors:
        url, target = prometheus
        # A variable's value as Grafana puts it in a query: regex-escaped, the backslashes doubled.
        values = {"instance": re.escape(target).replace("\\", "\\\\"), "service": ".*", "identity": ".*", "__rate_interval": "15s",
                  "__interval": "5s", "__range": "1m"}
        values.update({n: "" for n in ds_vars})

        def substitute(text):
            return VARIABLE.sub(lambda m: values.get(m[1] or m[2], m[0]), text)

        def get(path, **params):
            with urllib.request.urlopen(f"{url}{path}?{urllib.parse.urlencode(params, doseq=True)}", timeout=10) as r:
                return json.load(r)

        for where, expr, legend, kind in queries:
            q = Query(expr)
            try:
                if isinstance(kind, tuple):
                    answer = get(f"/api/v1/label/{kind[1]}/values", **{"match[]": substitute(q.expr)})
                else:
                    answer = get("/api/v1/query", query=substitute(expr))
            except urllib.error.HTTPError as e:
                error(where, f"Prometheus refused {substitute(expr)!r}: {e.read().decode(errors='replace').strip()}")
                continue
            ran += 1
            data = answer.get("data")
            empty = not (data if isinstance(kind, tuple) else data.get("result"))
            expected = kind != "annotation" and all(
                n in PROMETHEUS_OWN or (samples.get(n) and not any(
                    (l, v) in unseen_ok for l, op, v in m)) for n, m in q.selectors)
            if empty and expected:
                error(where, f"Prometheus answers nothing for {substitute(expr)!r}")

    if errors:
        for e in errors:
            print(f"FAIL: {e}", file=sys.stderr)
        sys.exit(1)
    def family(name):  # a histogram's or summary's series -> its family's name
        return re.sub(r"_(bucket|sum|count)$", "", name) if declared.get(name) in ("histogram", "summary") else name

    unused = sorted({family(n) for n in declared} - {family(n) for n in names_used})
    print(f"{queried} panels in {rows} rows, {len(queries)} queries, {len(names_used)} series names: "
          f"{', '.join(sorted(names_used))}")
    if own_used:
        print(f"Prometheus's own per-target series: {', '.join(sorted(own_used))}")
    if no_samples:
        print(f"declared by the server, no samples here: {', '.join(sorted(no_samples))}")
    if unused:
        print(f"served but not on the dashboard: {', '.join(unused)}")
    if prometheus:
        print(f"Prometheus ran all {ran} queries")


if __name__ == "__main__":
    main()
