"""Starting `maskc serve` for a test and talking to it (stdlib only)."""
import http.client
import json
import os
import re
import signal
import subprocess
import time


class Server:
    """`maskc serve DIR --port 0 ARGS...`, stopped (SIGINT) when the `with` block ends."""

    def __init__(self, maskc, folder, *args):
        self.process = subprocess.Popen(
            [maskc, "serve", folder, "--port", "0", *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.process.stdout.readline()
        match = re.search(r"http://([0-9.]+):([0-9]+)/", line)
        if not match:
            self.process.kill()
            raise AssertionError(f"maskc serve printed no URL: {line!r} "
                                 f"{self.process.stderr.read()!r}")
        self.host, self.port = match.group(1), int(match.group(2))
        self.url = f"http://{self.host}:{self.port}/"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            self.process.wait(timeout=20)

    def stop(self):
        """Ctrl-C; returns the exit status and what it printed after the URL."""
        self.process.send_signal(signal.SIGINT)
        out, err = self.process.communicate(timeout=20)
        return self.process.returncode, out + err

    def alive(self):
        return self.process.poll() is None and self.get("/api/info")[0] == 200

    def request(self, method, path, body=None, headers=None, timeout=60):
        connection = http.client.HTTPConnection(self.host, self.port, timeout=timeout)
        if isinstance(body, (dict, list)):
            body = json.dumps(body)
            headers = {"Content-Type": "application/json", **(headers or {})}
        connection.request(method, path, body=body, headers=headers or {})
        reply = connection.getresponse()
        data = reply.read()
        connection.close()
        return reply.status, data

    def get(self, path):
        return self.request("GET", path)

    def post(self, path, body, headers=None):
        return self.request("POST", path, body, headers)


def error_of(data):
    """The `error` of a JSON error reply."""
    return json.loads(data)["error"]


def decode_mask(data):
    """(header, values, provenance) of a binary mask reply (serve/mask_reply.h)."""
    import struct
    (length,) = struct.unpack_from("<I", data, 0)
    header = json.loads(data[4:4 + length])
    cells = header["n"] * header["n"]
    at = 4 + length
    values = struct.unpack_from(f"<{cells}f", data, at)
    provenance = None
    if header["has_provenance"]:
        provenance = struct.unpack_from(f"<{cells}i", data, at + 4 * cells)
    return header, list(values), provenance


def read_npy_float32(path):
    """(shape, values) of a little-endian float32 .npy file, as `maskc compile --format npy`
    writes it."""
    import ast
    import struct
    with open(path, "rb") as f:
        data = f.read()
    assert data[:6] == b"\x93NUMPY", path
    (header_length,) = struct.unpack_from("<H", data, 8)
    header = ast.literal_eval(data[10:10 + header_length].decode("latin1"))
    assert header["descr"] == "<f4" and not header["fortran_order"], header
    shape = header["shape"]
    count = 1
    for side in shape:
        count *= side
    values = struct.unpack_from(f"<{count}f", data, 10 + header_length)
    return shape, list(values)


def wait_until(condition, timeout=20, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def maskc_compile_error(maskc, folder, relative):
    """What `maskc compile` prints for the spec `relative` under `folder` (run from there)."""
    import tempfile
    with tempfile.TemporaryDirectory() as out:
        result = subprocess.run(
            [maskc, "compile", relative, "-o", os.path.join(out, "m.safetensors")],
            cwd=folder, capture_output=True, text=True)
    return result.returncode, result.stderr.strip()
