#!/usr/bin/env bash
# The documentation (README.md and docs/*.md) against the tree and the command (issue 38):
# - every relative link, [text](target) or a [label]: target definition (not http, https, mailto or
#   any other scheme), resolves to a file or folder of the repository relative to its page, and a
#   #anchor into a .md page names one of that page's headings (GitHub's rule: lowercase, punctuation
#   but - and _ dropped, spaces to -, a repeated heading gets -1, -2, ...);
# - every `outboard SUB ...` in a code block or inline code names a subcommand `outboard --help`
#   lists (and, for bench and dcuda, a mode `outboard SUB --help` lists, where one is named), and
#   every --flag up to the end of that command is one `outboard SUB [MODE] --help` lists. The
#   command ends at `--` alone (outboard run -- PROGRAM ARGS), at a shell |, ||, ; or &&, and at a
#   # comment; a | inside a word (`--log-format text|json`) is usage text, not a pipe. Where no
#   mode is named (`outboard bench MODE [--help]`, `outboard bench --plot`), a flag of any mode
#   counts.
# DOCS_ROOT checks another copy of the tree (default: this one); DOCS_CHECK_VERBOSE=1 lists every
# command found with the words checked.
BUILD=$1
source "$(dirname "$0")/lib.sh"
ROOT=${DOCS_ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}

status=0
python3 - "$ROOT" "$OUTBOARD" >"$WORK/docs_check.log" 2>&1 <<'PY' || status=$?
import glob, os, re, subprocess, sys
from urllib.parse import unquote

root, outboard = os.path.realpath(sys.argv[1]), sys.argv[2]
pages = [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md")))
problems = []

def rel(path):
    return os.path.relpath(path, root)

def problem(page, line, what):
    problems.append(f"{rel(page)}:{line}: {what}")

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")

def parse(path):
    """The page's fenced code lines and its prose lines (line numbers from 1)."""
    code, prose = [], []
    fence = None
    for n, line in enumerate(open(path, encoding="utf-8").read().split("\n"), 1):
        m = FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)
            continue
        if fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not line.strip()[len(m.group(1)):].strip():
                fence = None
            else:
                code.append((n, line))
            continue
        prose.append((n, line))
    return code, prose

def paragraphs(prose):
    """Runs of consecutive non-blank prose lines: (text, line number of each character)."""
    out, text, nums, last = [], "", [], None
    for n, line in prose + [(None, "")]:
        if not line.strip() or (last is not None and n != last + 1):
            if text:
                out.append((text, nums))
            text, nums = "", []
        if line.strip():
            text += line + "\n"
            nums += [n] * (len(line) + 1)
        last = n
    return out

def code_spans(text):
    """(start, end, content) of each inline code span: a run of N backticks to the next run of N."""
    spans, i = [], 0
    while True:
        m = re.compile(r"`+").search(text, i)
        if not m:
            return spans
        ticks = m.group(0)
        close = re.compile(r"(?<!`)" + ticks + r"(?!`)").search(text, m.end())
        if not close:
            i = m.end()
            continue
        spans.append((m.start(), close.end(), text[m.end():close.start()]))
        i = close.end()

def slug(heading):
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)   # links: their text
    text = re.sub(r"<[^>]+>", "", text).replace("`", "").replace("**", "")
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")

anchor_cache = {}
def anchors(path):
    if path not in anchor_cache:
        _, prose = parse(path)
        seen, found = {}, set()
        prev = ""
        for _, line in prose:
            m = re.match(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$", line)
            setext = re.match(r"^ {0,3}(=+|-+)\s*$", line) and prev.strip() and not re.match(r"^\s*([|>*+-]|\d+\.)", prev)
            text = m.group(2) if m else (prev if setext else None)
            if text is not None:
                s = slug(text)
                k = seen.get(s, 0)
                found.add(s if k == 0 else f"{s}-{k}")
                seen[s] = k + 1
            for a in re.findall(r"<a\s+(?:name|id)=\"([^\"]+)\"", line):
                found.add(a)
            prev = line
        anchor_cache[path] = found
    return anchor_cache[path]

def check_link(page, line, target):
    target = target.strip()
    if target.startswith("<") and target.endswith(">"):
        target = target[1:-1]
    target = re.sub(r"\s+(\"[^\"]*\"|'[^']*')$", "", target)   # a title
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", target):
        return False                                          # http:, https:, mailto: ...
    path, _, anchor = target.partition("#")
    dest = os.path.realpath(os.path.join(os.path.dirname(page), unquote(path))) if path else page
    if not (dest == root or dest.startswith(root + os.sep)):
        problem(page, line, f"link '{target}' leads out of the repository")
    elif not os.path.exists(dest):
        problem(page, line, f"link '{target}': {rel(dest)} does not exist")
    elif anchor and dest.endswith(".md") and os.path.isfile(dest):
        if unquote(anchor) not in anchors(dest):
            problem(page, line, f"link '{target}': no heading of {rel(dest)} has the anchor #{anchor}")
    return True

help_cache = {}
def help_of(*words):
    if words not in help_cache:
        r = subprocess.run([outboard, *words, "--help"], capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"`outboard {' '.join(words)} --help` failed ({r.returncode}): {r.stderr.strip()}")
        help_cache[words] = r.stdout
    return help_cache[words]

def subcommands(*words):
    text = help_of(*words)
    part = text.split("Subcommands:", 1)
    return set(re.findall(r"(?m)^  ([a-z][a-z0-9-]*)\s", part[1])) if len(part) == 2 else set()

def flags_in(text):
    return set(re.findall(r"(?<![\w-])(--[A-Za-z0-9][A-Za-z0-9-]*)", text))

TOP = subcommands()
if not TOP:
    sys.exit("`outboard --help` lists no subcommands")
VERBOSE = os.environ.get("DOCS_CHECK_VERBOSE") == "1"
ENDS = {"--", "|", "||", ";", "&&"}
COMMAND = re.compile(r"(?:^|(?<=[\s(\"'=]))(?:[\w./-]*/)?outboard[ \t]+([a-z][a-z0-9-]*)")

def check_command(page, line, text):
    """Every `outboard SUB ...` in one command line; returns the flags checked."""
    checked = 0
    for m in COMMAND.finditer(text):
        sub = m.group(1)
        if sub not in TOP:
            problem(page, line, f"`outboard {sub}`: not a subcommand (outboard --help lists {', '.join(sorted(TOP))})")
            continue
        tokens = []
        for tok in text[m.end():].split():
            if tok in ENDS or tok.startswith("#"):
                break
            if tok.endswith(";") or tok.endswith("&&"):
                tokens.append(tok.rstrip(";&"))
                break
            tokens.append(tok)
        modes = subcommands(sub)
        allowed = flags_in(help_of(sub))
        where = f"outboard {sub}"
        if modes and tokens and re.fullmatch(r"[a-z][a-z0-9-]*", tokens[0]):
            if tokens[0] not in modes:
                problem(page, line, f"`outboard {sub} {tokens[0]}`: not a mode ({where} --help lists {', '.join(sorted(modes))})")
                continue
            allowed |= flags_in(help_of(sub, tokens[0]))
            where += " " + tokens[0]
        elif modes:
            for mode in modes:
                allowed |= flags_in(help_of(sub, mode))
            where += " (any mode)"
        if VERBOSE:
            print(f"  {rel(page)}:{line}: {where}: {' '.join(tokens)}")
        for tok in tokens:
            for flag in re.findall(r"(?<![\w-])(--[A-Za-z0-9][A-Za-z0-9-]*)", tok):
                checked += 1
                if flag not in allowed:
                    problem(page, line, f"`{where} {flag}`: {where.split(' (')[0]} --help has no {flag}")
    return checked

total_links = total_commands = total_flags = 0
for page in pages:
    code, prose = parse(page)
    links = commands = flags = 0
    # Commands in fenced code, a line each (a trailing backslash continues it).
    pending, start = "", None
    for n, line in code:
        start = start or n
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        text, pending = pending + line, ""
        commands += len(COMMAND.findall(text))
        flags += check_command(page, start, text)
        start = None
    for text, nums in paragraphs(prose):
        spans = code_spans(text)
        for s, e, content in spans:
            one = " ".join(content.split())
            commands += len(COMMAND.findall(one))
            flags += check_command(page, nums[s], one)
        masked = list(text)
        for s, e, _ in spans:
            masked[s:e] = " " * (e - s)
        masked = "".join(masked)
        for m in re.finditer(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*(<[^>]*>|[^()\s]*(?:\([^()]*\)[^()\s]*)*)(\s+\"[^\"]*\")?\s*\)", masked):
            links += check_link(page, nums[m.start()], m.group(1))
        for m in re.finditer(r"(?m)^ {0,3}\[[^\]]+\]:\s*(\S+)", masked):
            links += check_link(page, nums[m.start()], m.group(1))
    print(f"{rel(page)}: {links} relative links, {commands} outboard commands, {flags} flags")
    total_links += links; total_commands += commands; total_flags += flags
print(f"{len(pages)} pages: {total_links} relative links, {total_commands} outboard commands, {total_flags} flags checked")
for p in problems:
    print("FAIL " + p)
sys.exit(1 if problems else 0)
PY
cat "$WORK/docs_check.log"
[ $status = 0 ] || fail "docs: $(grep -c '^FAIL ' "$WORK/docs_check.log") problems (above)"
ok "docs: $(tail -n 1 "$WORK/docs_check.log")"
