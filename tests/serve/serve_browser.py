"""The page of `maskc serve` in headless Chromium (tests/serve/cdp.py): a spec typed into the
playground draws the cells `maskc compile` writes, an error marks its line with `maskc
compile`'s words, a run folder appears in the dashboard and its curve grows with its
metrics.jsonl; the time from a keystroke to the redrawn heatmap is measured and printed. One case
per CTest test (tests/cmake/serve.cmake).
Usage: serve_browser.py MASKC SOURCE_DIR CASE [OUT_DIR]   (CASE screenshots writes PNGs to OUT_DIR)"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    from cdp import Browser  # noqa: E402
except ImportError as missing:  # python3-websocket (scripts/setup.sh): CTest reports a skip
    print(f"skipped: {missing} (scripts/setup.sh installs python3-websocket)")
    sys.exit(77)
from serve_util import Server, maskc_compile_error, read_npy_float32, wait_until  # noqa: E402

MASKC, SOURCE = sys.argv[1], sys.argv[2]
SPECS = os.path.join(SOURCE, "specs")
# A finished run of the committed quick GOTU suite, read from its archive (runs/archive.h).
ARCHIVE = os.path.join(SOURCE, "docs/results/gotu-quick/runs.jsonl.gz")
RUN = "runs/threesym-mimetic/seed0"


def archived_runs():
    """{path: {file name: text}} of every run in ARCHIVE."""
    import gzip
    with gzip.open(ARCHIVE, "rt", encoding="utf-8") as archive:
        return {run["path"]: run["files"] for run in map(json.loads, archive)}


def run_file(name):
    """The text of file `name` of the archived run RUN."""
    return archived_runs()[RUN][name]


def copy_run_file(name, folder):
    with open(os.path.join(folder, name), "w", encoding="utf-8", newline="") as f:
        f.write(run_file(name))
# A 1,024-token spec: a 32 x 32 image grid, each patch open to its 5 x 5 neighbourhood.
LONG_SPEC = """mask grid1024
param side = 32
tokens p[side * side]
grid p side x side
scale open = 10, close = -10
default close
open local p radius 2 metric chebyshev
"""


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def compiled_cells(folder, spec, *flags):
    """Every cell `maskc compile SPEC --format npy` writes: (shape, values)."""
    out = os.path.join(tempfile.mkdtemp(), "m.npy")
    subprocess.run([MASKC, "compile", spec, "-o", out, *flags], cwd=folder, check=True,
                   capture_output=True)
    return read_npy_float32(out)


def head_slice(shape, values, layer, head):
    n = shape[2]
    start = (layer * shape[1] + head) * n * n
    return values[start:start + n * n]


def colour(value, scale):
    """render/png.cpp's colour of a value (the page draws the same)."""
    t = max(-1.0, min(1.0, value / scale))
    fade = int(255 * (1 - abs(t)) + 0.5)
    return [255 if t >= 0 else fade, fade, 255 if t <= 0 else fade]


PIXELS_JS = """(() => {
  const d = window.maskprior.drawn(), c = document.getElementById('heatmap');
  const img = c.getContext('2d').getImageData(0, 0, c.width, c.height).data, out = [];
  for (let q = 0; q < d.n; ++q) for (let k = 0; k < d.n; ++k) {
    const x = Math.floor(d.origin + (k + 0.5) * d.side / d.n);
    const y = Math.floor(d.origin + (q + 0.5) * d.side / d.n);
    const i = 4 * (y * c.width + x);
    out.push([img[i], img[i + 1], img[i + 2]]);
  }
  return out; })()"""


def check_heatmap(browser, expected, what):
    """The page's cells and the colours drawn at each cell's centre are `expected`'s."""
    cells = browser.evaluate("window.maskprior.cells()")
    check(len(cells) == len(expected), f"{what}: {len(cells)} cells, not {len(expected)}")
    wrong = [i for i, (a, b) in enumerate(zip(cells, expected)) if a != b]
    check(not wrong, f"{what}: {len(wrong)} cells differ from maskc compile's, first {wrong[:5]}")
    scale = max(abs(v) for v in expected) or 1.0
    pixels = browser.evaluate(PIXELS_JS)
    bad = [i for i, p in enumerate(pixels) if p != colour(expected[i], scale)]
    check(not bad, f"{what}: {len(bad)} cells drawn in the wrong colour, first {bad[:5]}")


def open_spec(browser, choice):
    browser.wait_for("window.maskprior.ready")
    browser.evaluate(f"(() => {{ const s = document.getElementById('open'); s.value = '{choice}';"
                     " s.dispatchEvent(new Event('change')); })()")


def replace_text(browser, text):
    """Selects the editor's text and types `text` over it."""
    browser.evaluate("(() => { const e = document.getElementById('source'); e.focus();"
                     " e.select(); })()")
    browser.type_text(text)


def hover_cell(browser, q, k):
    d = browser.evaluate("(() => { const d = window.maskprior.drawn();"
                         " const b = document.getElementById('heatmap').getBoundingClientRect();"
                         " return {origin: d.origin, side: d.side, n: d.n, x: b.left, y: b.top,"
                         " w: b.width, cw: document.getElementById('heatmap').width}; })()")
    ratio = d["w"] / d["cw"]
    x = d["x"] + (d["origin"] + (k + 0.5) * d["side"] / d["n"]) * ratio
    y = d["y"] + (d["origin"] + (q + 0.5) * d["side"] / d["n"]) * ratio
    browser.send("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)
    browser.evaluate(f"window.maskprior.lastMouse = [{x}, {y}]")
    return browser.evaluate("document.getElementById('hover').textContent")


def served_copy(root):
    served = os.path.join(root, "served")
    os.makedirs(os.path.join(served, "vision"))
    shutil.copy(os.path.join(SPECS, "vision/local7x7.mask"), os.path.join(served, "vision"))
    shutil.copy(os.path.join(SPECS, "gotu/parity2.mask"), served)
    with open(os.path.join(served, "grid1024.mask"), "w") as f:
        f.write(LONG_SPEC)
    return served


def case_heatmap_matches_compile(server, browser, served):
    browser.open(server.url)
    open_spec(browser, "file:vision/local7x7.mask")
    browser.wait_for("window.maskprior.state.mask?.header.name === 'local7x7'")
    shape, values = compiled_cells(served, "vision/local7x7.mask")
    check(list(shape) == [1, 4, 50, 50], f"shape {shape}")
    check_heatmap(browser, head_slice(shape, values, 0, 0), "local7x7 head 0")
    browser.evaluate("(() => { const s = document.getElementById('head'); s.value = '2';"
                     " s.dispatchEvent(new Event('change')); })()")
    browser.wait_for("window.maskprior.state.mask?.header.head === 2")
    check_heatmap(browser, head_slice(shape, values, 0, 2), "local7x7 head 2")
    # A spec typed into the editor.
    typed = open(os.path.join(served, "parity2.mask")).read().replace(
        "mask parity2", "mask typed").replace("param n = 15", "param n = 6") + \
        "open x[2] -> x[3]\n"
    replace_text(browser, typed)
    browser.wait_for("window.maskprior.state.mask?.header.name === 'typed'")
    with open(os.path.join(served, "typed.mask"), "w") as f:
        f.write(typed)
    shape, values = compiled_cells(served, "typed.mask")
    check_heatmap(browser, head_slice(shape, values, 0, 0), "typed spec")
    text = hover_cell(browser, 0, 1)
    check("set by line 13: open cls -> x[0], x[1]" in text and "M = 10" in text, text)
    text = hover_cell(browser, 3, 4)
    check("set by line 15: open x[2] -> x[3]" in text, text)
    # The spec's `param n` is a field: a new value recompiles, as -D n=... would.
    browser.evaluate("(() => { const f = document.querySelector('#params input[data-param=n]');"
                     " f.value = '4'; f.dispatchEvent(new Event('input')); })()")
    browser.wait_for("window.maskprior.state.mask?.header.n === 5")
    shape, values = compiled_cells(served, "typed.mask", "-D", "n=4")
    check_heatmap(browser, head_slice(shape, values, 0, 0), "typed spec, n = 4")


def case_error_marks_line(server, browser, served):
    browser.open(server.url)
    open_spec(browser, "file:parity2.mask")
    browser.wait_for("window.maskprior.state.mask?.header.name === 'parity2'")
    good = open(os.path.join(served, "parity2.mask")).read()
    bad = good.replace("open pair x[0], x[1]", "open pair x[0], y[1]")
    replace_text(browser, bad)
    line = browser.wait_for("document.querySelector('#gutter .error')?.dataset.line")
    shown = browser.evaluate("document.getElementById('diagnostic').textContent")
    with open(os.path.join(served, "parity2.mask"), "w") as f:
        f.write(bad)
    code, printed = maskc_compile_error(MASKC, served, "parity2.mask")
    check(code == 1, f"maskc compile exited {code}")
    check(shown == printed, f"the page shows {shown!r}, maskc compile prints {printed!r}")
    check(printed.startswith(f"parity2.mask:{line}:"), f"line {line} marked; {printed!r}")
    check(line == "14", f"marked line {line}, the error is on line 14")
    replace_text(browser, good)
    browser.wait_for("!document.querySelector('#gutter .error') && "
                     "!document.getElementById('heatmap').classList.contains('stale')")


def write_run(folder, records, running=True):
    os.makedirs(folder, exist_ok=True)
    copy_run_file("config.json", folder)
    with open(os.path.join(folder, "metrics.jsonl"), "w") as f:
        f.writelines(records)
    if running:
        open(os.path.join(folder, ".lock"), "w").close()


def case_dashboard_curve_updates(server, browser, served):
    records = run_file("metrics.jsonl").splitlines(keepends=True)
    run = os.path.join(served, "runs/a")
    write_run(run, records[:2])
    browser.open(server.url + "#dashboard")
    browser.wait_for("!!document.querySelector('#runs tr[data-path=\"runs/a\"]')")
    points = "window.maskprior.curves()[0]?.points.length"
    check(browser.wait_for(f"{points} === 2 && {points}") == 2, "two points first")
    with open(os.path.join(run, "metrics.jsonl"), "a") as f:
        f.write(records[2])
    browser.wait_for(f"{points} === 3")
    series = browser.evaluate("window.maskprior.curves()[0]")
    expected = [[json.loads(r)["step"], json.loads(r)["accuracy"]] for r in records[:3]]
    check(series["points"] == expected, f"curve {series['points']} != {expected}")
    status = "document.querySelector('#runs tr[data-path=\"runs/a\"]').cells[6].textContent"
    check(browser.evaluate(status) == "running", browser.evaluate(status))
    # A run that starts while the page is open; one that finishes, with its learned mask.
    write_run(os.path.join(served, "runs/b"), records[:1])
    browser.wait_for("!!document.querySelector('#runs tr[data-path=\"runs/b\"]')")
    # Its "learned" mask: the spec with one more rule (the same layout and metadata).
    spec = open(os.path.join(served, "parity2.mask")).read()
    with open(os.path.join(run, "spec.mask"), "w") as f:
        f.write(spec)
    with open(os.path.join(run, "learned.mask"), "w") as f:
        f.write(spec + "open x[2] -> x[3]\n")
    subprocess.run([MASKC, "compile", "learned.mask", "-o", "mask.safetensors"], cwd=run,
                   check=True, capture_output=True)
    copy_run_file("summary.json", run)
    os.remove(os.path.join(run, ".lock"))
    browser.wait_for(f"{status} === 'finished'")
    diff = browser.wait_for("window.maskprior.diffCells()")
    _, learned = compiled_cells(run, "learned.mask")
    _, init = compiled_cells(run, "spec.mask")
    check(sum(1 for d in diff if d) == 1, "one cell changed")
    check(diff == [a - b for a, b in zip(learned, init)], "learned − initial differs")


def case_dashboard_groups_seeds(server, browser, served):
    # Issue 46.6: a sweep's runs shown one row per setting, its seeds pooled (mean ± std of the
    # headline), curves with a band from the lowest to the highest seed; sortable; ungrouped on
    # request.
    config = json.loads(run_file("config.json"))
    finals = {"vanilla": [0.50, 0.60, 0.55], "mask": [0.90, 1.00, 0.95]}
    for init, values in finals.items():
        for seed, final in enumerate(values):
            folder = os.path.join(served, f"sweep/init={init}/seed{seed}")
            os.makedirs(folder)
            with open(os.path.join(folder, "config.json"), "w") as f:
                json.dump(dict(config, init=init, seed=seed), f)
            with open(os.path.join(folder, "metrics.jsonl"), "w") as f:
                for step, value in [(0, 0.5), (10, (0.5 + final) / 2), (20, final)]:
                    f.write(json.dumps({"step": step, "accuracy": value}) + "\n")
            with open(os.path.join(folder, "summary.json"), "w") as f:
                json.dump({"accuracy": final, "steps": 20, "interrupted": False}, f)
    browser.open(server.url + "#dashboard")
    group = "document.querySelector('#runs tr[data-group=\"init=mask\"]')"
    browser.wait_for(f"!!{group}")
    rows = browser.evaluate("window.maskprior.rows().map((r) => [r.group, r.seeds, r.value])")
    check(sorted(r[:2] for r in rows) == [["init=mask", 3], ["init=vanilla", 3]], rows)
    headline = browser.evaluate(f"{group}.cells[7].textContent")
    check(headline == "accuracy 0.9500 ± 0.050 (3 of 3)", headline)
    # Tick the mask setting: its curve is the seeds' mean with their min–max band.
    browser.evaluate(f"(() => {{ const b = {group}.querySelector('input'); if (!b.checked) b.click(); }})()")
    series = "window.maskprior.curves().find((s) => s.label.startsWith('init=mask'))"
    browser.wait_for(f"!!{series}?.band")
    curve = browser.evaluate(series)
    (x, mean), (_, low, high) = curve["points"][-1], curve["band"][-1]
    check(x == 20 and abs(mean - 0.95) < 1e-9 and (low, high) == (0.9, 1.0), curve)
    # Sorted by the headline, highest first; then one row per run.
    browser.evaluate("document.querySelector('#runs th[data-sort=\"6\"]').click()")
    order = browser.evaluate("window.maskprior.rows().map((r) => r.group)")
    check(order == ["init=mask", "init=vanilla"], order)
    browser.evaluate("document.getElementById('group-seeds').click()")
    check(browser.wait_for("window.maskprior.rows().length === 6 && 6") == 6, "one row per run")
    paths = browser.evaluate("window.maskprior.rows().map((r) => r.paths[0])")
    check(paths[0] == "sweep/init=mask/seed1" and paths[-1] == "sweep/init=vanilla/seed0", paths)


def keystroke_times(browser, choice, name, count=7):
    """Median ms from a keystroke to the redrawn heatmap (with the page's 120 ms debounce), and
    the parts of the last one."""
    open_spec(browser, choice)
    browser.wait_for(f"window.maskprior.state.mask?.header.name === '{name}'")
    times = []
    for i in range(count):
        done = browser.evaluate("window.maskprior.state.timings.length")
        browser.evaluate("(() => { const e = document.getElementById('source'); e.focus();"
                         " e.setSelectionRange(e.value.length, e.value.length); })()")
        browser.type_text(f"# {i}\n")
        browser.wait_for(f"window.maskprior.state.timings.length > {done} && "
                         "window.maskprior.state.inputAt === null")
        times.append(browser.evaluate("window.maskprior.state.timings.at(-1)"))
    last = times[-1]
    return statistics.median(t["input_to_draw_ms"] for t in times), last


def case_keystroke_timing(server, browser, served):
    browser.open(server.url)
    for choice, name in [("file:vision/local7x7.mask", "local7x7"),
                         ("file:grid1024.mask", "grid1024")]:
        median, last = keystroke_times(browser, choice, name)
        check(last["n"] == (50 if name == "local7x7" else 1024), f"{name}: {last}")
        print(f"{name} (N = {last['n']}): keystroke -> heatmap {median:.0f} ms median "
              f"(debounce 120 ms; last: compile {last['compile_ms']:.1f} ms, request "
              f"{last['request_ms']:.0f} ms, draw {last['draw_ms']:.0f} ms)")


def case_screenshots(server, browser, served):
    out = sys.argv[4]
    specs = Server(MASKC, SPECS)
    browser.open(specs.url)
    open_spec(browser, "file:vision/local7x7.mask")
    browser.wait_for("window.maskprior.state.mask?.header.name === 'local7x7'")
    hover_cell(browser, 17, 18)
    x, y = browser.evaluate("window.maskprior.lastMouse")
    for event in ("mousePressed", "mouseReleased"):
        browser.send("Input.dispatchMouseEvent", type=event, x=x, y=y, button="left",
                     clickCount=1)
    browser.screenshot(os.path.join(out, "serve-playground.png"))
    specs.stop()
    runs_dir = sys.argv[5] if len(sys.argv) > 5 else None
    if runs_dir is None:  # the quick GOTU suite's runs, unpacked from their archive
        runs_dir = os.path.join(served, "gotu-quick")
        for path, files in archived_runs().items():
            os.makedirs(os.path.join(runs_dir, path))
            for name, text in files.items():
                with open(os.path.join(runs_dir, path, name), "w", encoding="utf-8",
                          newline="") as f:
                    f.write(text)
    with Server(MASKC, runs_dir) as runs:
        browser.open(runs.url + "#dashboard")
        browser.wait_for("window.maskprior.curves().length > 0")
        browser.evaluate("(() => { for (const box of document.querySelectorAll('#runs input')) {"
                         " if (!box.checked) box.click(); } })()")
        browser.evaluate("new Promise((r) => setTimeout(r, 2500))")
        browser.screenshot(os.path.join(out, "serve-dashboard.png"))


def main():
    case = globals()["case_" + sys.argv[3]]
    if not (shutil.which("chromium") or shutil.which("chromium-browser")):
        print("skipped: no chromium on PATH (scripts/setup.sh installs Debian's)")
        sys.exit(77)
    root = tempfile.mkdtemp()
    try:
        served = served_copy(root)
        height = 1250 if sys.argv[3] == "screenshots" else 900
        with Server(MASKC, served) as server, Browser(height=height) as browser:
            browser.send("Page.enable")
            case(server, browser, served)
    finally:
        shutil.rmtree(root)
    print(f"ok: {sys.argv[3]}")


if __name__ == "__main__":
    main()
