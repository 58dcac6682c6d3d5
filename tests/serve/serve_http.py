"""`maskc serve` over HTTP: what it refuses (paths out of its folder, oversize and malformed
requests, other sites' requests), that it survives them, concurrent requests and clients that
go away, and Ctrl-C. One case per CTest test (tests/cmake/serve.cmake).
Usage: serve_http.py MASKC SOURCE_DIR CASE"""
import json
import os
import shutil
import socket
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_util import Server, decode_mask, error_of, maskc_compile_error, read_npy_float32  # noqa

MASKC, SOURCE = sys.argv[1], sys.argv[2]
PARITY2 = open(os.path.join(SOURCE, "specs/gotu/parity2.mask")).read()


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def expect_error(reply, status, text):
    got, data = reply
    check(got == status, f"status {got}, not {status}: {data[:300]!r}")
    message = error_of(data)
    check(text in message, f"error {message!r} does not say {text!r}")


def make_folder(root):
    """DIR with a spec, a table, a subfolder, a secret outside it and links out."""
    served = os.path.join(root, "served")
    os.makedirs(os.path.join(served, "sub"))
    with open(os.path.join(served, "parity2.mask"), "w") as f:
        f.write(PARITY2)
    with open(os.path.join(root, "secret.mask"), "w") as f:
        f.write("mask secret\n")
    os.symlink(os.path.join(root, "secret.mask"), os.path.join(served, "out.mask"))
    os.symlink(root, os.path.join(served, "up"))
    return served


def case_traversal_refused(server, root):
    for path in ["../secret.mask", "sub/../../secret.mask", "..", "%2e%2e/secret.mask"]:
        status, data = server.get(f"/api/file?path={path}")
        check(status in (400, 403, 404), f"{path}: status {status}")
        check(b"mask secret" not in data, f"{path}: leaked the file")
    expect_error(server.get("/api/file?path=../secret.mask"), 400, "has a `..`")
    expect_error(server.get(f"/api/file?path={root}/secret.mask"), 400, "absolute path")
    expect_error(server.get("/api/file?path=/etc/passwd"), 400, "absolute path")
    expect_error(server.get("/api/file?path=out.mask"), 403, "outside the served folder")
    expect_error(server.get("/api/file?path=up/secret.mask"), 403, "outside the served folder")
    expect_error(server.get("/api/raw?path=up/secret.mask"), 403, "outside the served folder")
    expect_error(server.get("/api/run?path=up"), 403, "outside the served folder")
    expect_error(server.get("/api/file?path=missing.mask"), 404, "no file")
    status, data = server.get("/api/file?path=parity2.mask")
    check(status == 200 and data.decode() == PARITY2, f"parity2.mask: {status}")
    listed = json.loads(server.get("/api/info")[1])["specs"]
    check(listed == ["parity2.mask"], f"listed {listed}: a link out is no spec of the folder")


def case_save_confined(server, root):
    served = os.path.join(root, "served")
    for path, status, text in [("../x.mask", 400, "has a `..`"),
                               (f"{root}/x.mask", 400, "absolute path"),
                               ("out.mask", 403, "leads outside"),
                               ("up/x.mask", 403, "leads outside"),
                               ("sub/x.txt", 403, ".mask specs only"),
                               ("nofolder/x.mask", 404, "no folder")]:
        expect_error(server.post("/api/save", {"path": path, "source": "mask x\n"}), status, text)
    check(open(os.path.join(root, "secret.mask")).read() == "mask secret\n", "secret changed")
    check(not os.path.exists(os.path.join(root, "x.mask")), "wrote outside the folder")
    status, data = server.post("/api/save", {"path": "sub/new.mask", "source": PARITY2})
    check(status == 200 and json.loads(data)["saved"] == "sub/new.mask", f"save: {data!r}")
    check(open(os.path.join(served, "sub/new.mask")).read() == PARITY2, "saved text differs")
    leftovers = [n for n in os.listdir(os.path.join(served, "sub")) if ".tmp-" in n]
    check(not leftovers, f"temporary files left: {leftovers}")


def case_oversize_refused(server, root):
    big = "#" * (17 << 20)  # over the 16 MiB maskc compile reads
    expect_error(server.post("/api/compile", {"source": big}), 413, "at most 16 MiB")
    status, _ = server.post("/api/compile", "x" * (40 << 20),
                            {"Content-Type": "application/json"})
    check(status == 413, f"a 40 MiB body: status {status}")
    big_spec = "mask big\ntokens x[4096]\ndefault close\n"
    expect_error(server.post("/api/compile", {"source": big_spec}), 413, "at most 2048")
    check(server.alive(), "server gone after oversize requests")


def case_caps_as_compile(server, root):
    # The same --max-bytes cap and message as maskc compile; a time limit on every compile.
    with Server(MASKC, root, "--max-bytes", "1000") as capped:
        expect_error(capped.post("/api/compile", {"source": PARITY2, "file": "parity2.mask"}),
                     422, "above the limit of 1000 B")
    slow = ("mask slow\ntokens x[2025]\ngrid x 45 x 45\ndefault close\n" +
            "open local x radius 40 metric chebyshev\n" * 400)
    with Server(MASKC, root, "--time-limit", "0.1") as limited:
        expect_error(limited.post("/api/compile", {"source": slow}), 503, "time limit")
        check(limited.alive(), "server gone after a compile over the time limit")


def case_malformed_refused(server, root):
    expect_error(server.post("/api/compile", "{not json", {"Content-Type": "application/json"}),
                 400, "malformed request")
    expect_error(server.post("/api/compile", [1, 2]), 400, "no JSON object")
    expect_error(server.post("/api/compile", {"source": 42}), 400, "malformed request")
    expect_error(server.post("/api/compile", {"text": "mask x"}), 400, "malformed request")
    expect_error(server.post("/api/compile", {"source": PARITY2, "params": {"n": "x"}}), 422, "")
    expect_error(server.get("/api/run_mask?path=.&layer=abc"), 404, "")
    expect_error(server.post("/api/save", "path=a.mask", {"Content-Type": "text/plain"}), 415,
                 "application/json")
    expect_error(server.request("GET", "/api/info", headers={"Host": "evil.example:%d" %
                                                             server.port}), 403, "Host")
    status, _ = server.get("/api/nothing")
    check(status == 404, f"unknown route: {status}")
    # A request line that is no HTTP at all.
    with socket.create_connection((server.host, server.port)) as raw:
        raw.sendall(b"\x00\xff GARBAGE\r\n\r\n")
        raw.settimeout(10)
        check(raw.recv(100).startswith(b"HTTP/1.1 400"), "garbage: no 400")
    check(server.alive(), "server gone after malformed requests")


def case_spec_error_as_compile(server, root):
    served = os.path.join(root, "served")
    bad = PARITY2.replace("open pair x[0], x[1]", "open pair x[0], y[1]")
    with open(os.path.join(served, "bad.mask"), "w") as f:
        f.write(bad)
    code, printed = maskc_compile_error(MASKC, served, "bad.mask")
    check(code == 1, f"maskc compile exited {code}")
    status, data = server.post("/api/compile", {"source": bad, "file": "bad.mask"})
    check(status == 422, f"status {status}")
    reply = json.loads(data)
    check(reply["error"] == printed, f"{reply['error']!r} != maskc compile's {printed!r}")
    check(printed.startswith(f"bad.mask:{reply['line']}:{reply['column']}: error: "), printed)


def case_compile_matches_maskc(server, root):
    served = os.path.join(root, "served")
    out = os.path.join(root, "m.npy")
    os.system(f"'{MASKC}' compile {served}/parity2.mask -D n=6 -o {out} >/dev/null")
    shape, values = read_npy_float32(out)
    status, data = server.post("/api/compile", {"source": PARITY2, "params": {"n": 6}})
    check(status == 200, f"status {status}")
    header, cells, provenance = decode_mask(data)
    check(header["n"] == 7 and list(shape) == [1, 1, 7, 7], f"{header['n']} {shape}")
    check(cells == values, "cells differ from maskc compile's")
    # Row cls: the diagonal (line 12), cls -> x[0], x[1] (line 13), the default elsewhere (0).
    check(provenance[:4] == (12, 13, 13, 0), f"provenance {provenance[:8]}")


def case_validate_as_maskc(server, root):
    import subprocess
    served = os.path.join(root, "served")
    with open(os.path.join(served, "sub/t.csv"), "w") as f:
        f.write("x0,x1,y\n0,0,0\n0,1,0\n1,0,0\n1,1,1\n")
    spec = os.path.join(served, "parity2.mask")
    for target, flags in [({"task": "parity2"}, ["--task", "parity2"]),
                          ({"truth_table": "sub/t.csv"}, ["--truth-table", "sub/t.csv"])]:
        printed = subprocess.run([MASKC, "validate", "parity2.mask", *flags], cwd=served,
                                 capture_output=True, text=True)
        status, data = server.post("/api/validate", {"source": PARITY2, "file": "parity2.mask",
                                                     **target})
        check(status == 200, f"{target}: {status} {data[:300]!r}")
        reply = json.loads(data)
        check(reply["text"] == printed.stdout, f"{reply['text']!r} != {printed.stdout!r}")
        check(reply["ok"] == (printed.returncode == 0), f"ok {reply['ok']}")
    check(os.path.exists(spec), spec)
    expect_error(server.post("/api/validate", {"source": PARITY2, "truth_table": "../t.csv"}),
                 400, "has a `..`")
    expect_error(server.post("/api/validate", {"source": PARITY2}), 400, "name one target")
    expect_error(server.post("/api/validate", {"source": PARITY2, "task": "nothing"}), 400,
                 "nothing")


def case_concurrent_requests(server, root):
    failures = []

    def work(i):
        try:
            if i % 2:
                status, data = server.post("/api/compile", {"source": PARITY2, "params": {"n": i + 2}})
                check(status == 200 and decode_mask(data)[0]["n"] == i + 3, f"compile {i}")
            else:
                status, _ = server.get("/api/file?path=parity2.mask")
                check(status == 200, f"file {i}: {status}")
        except Exception as e:  # noqa: BLE001 - collected and reported below
            failures.append(repr(e))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    check(not failures, f"{len(failures)} failed: {failures[:3]}")


def case_client_disconnects(server, root):
    spec = "mask big\ntokens x[2025]\ngrid x 45 x 45\ndefault close\nopen local x radius 3\n"
    body = json.dumps({"source": spec}).encode()
    for _ in range(5):
        raw = socket.create_connection((server.host, server.port))
        raw.sendall(b"POST /api/compile HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
                    b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n"
                    % (server.port, len(body)) + body)
        check(raw.recv(1000).startswith(b"HTTP/1.1 200"), "no reply")  # of 36 MiB, then gone
        raw.close()
    # Half a request, then gone.
    raw = socket.create_connection((server.host, server.port))
    raw.sendall(b"POST /api/compile HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1000\r\n\r\n{")
    raw.close()
    check(server.alive(), "server gone after clients went away")


def case_ctrl_c_exits_0(server, root):
    code, printed = server.stop()
    check(code == 0, f"exit status {code}: {printed}")
    check("maskc serve: stopped" in printed, printed)


def case_host_warning(server, root):
    server.stop()
    with Server(MASKC, root, "--host", "0.0.0.0") as exposed:
        code, printed = exposed.stop()
    check(code == 0 and "warning: listening on 0.0.0.0" in printed, printed)


def case_cannot_serve(server, root):
    import subprocess
    result = subprocess.run([MASKC, "serve", os.path.join(root, "nothing")], capture_output=True,
                            text=True, timeout=20)
    check(result.returncode == 1 and "cannot serve" in result.stderr, result.stderr)
    result = subprocess.run([MASKC, "serve", root, "--port", str(server.port)],
                            capture_output=True, text=True, timeout=20)
    check(result.returncode == 1 and "cannot listen" in result.stderr, result.stderr)


def main():
    case = globals()["case_" + sys.argv[3]]
    root = tempfile.mkdtemp()
    try:
        served = make_folder(root)
        with Server(MASKC, served) as server:
            case(server, root)
    finally:
        shutil.rmtree(root)
    print(f"ok: {sys.argv[3]}")


if __name__ == "__main__":
    main()
