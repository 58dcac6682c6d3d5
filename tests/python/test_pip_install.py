"""`pip install .` as the README says it (CTest `python_pip_install`): a fresh virtual environment
that sees this interpreter's packages (numpy, torch and setuptools from the environment
scripts/setup.sh makes; no network: --no-index, --no-build-isolation) installs maskprior from the
source tree and imports it from there.
MASKPRIOR_BUILD_DIR (the project's build folder) is reused by setup.py, so the extension is not
compiled again."""
import os
import pathlib
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import unittest

ROOT = pathlib.Path(os.environ.get("MASKPRIOR_SOURCE_DIR",
                                   pathlib.Path(__file__).resolve().parents[2]))


def has_venv_and_pip():
    try:
        import ensurepip  # noqa: F401  (python3-venv)
        import setuptools  # noqa: F401
        import pip  # noqa: F401
        return True
    except ImportError:
        return False


@unittest.skipUnless(has_venv_and_pip(), "needs python3-venv, python3-pip and python3-setuptools "
                                         "(scripts/setup.sh)")
class PipInstallTest(unittest.TestCase):
    def test_install_into_a_fresh_venv_and_import(self):
        with tempfile.TemporaryDirectory() as tmp:
            venv = pathlib.Path(tmp) / "venv"
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True,
                           capture_output=True)
            # This interpreter's packages behind the new environment's own, as
            # --system-site-packages would give them were this interpreter not a venv itself.
            site = subprocess.run([str(venv / "bin" / "python"), "-c",
                                   "import sysconfig; print(sysconfig.get_path('purelib'))"],
                                  check=True, capture_output=True, text=True).stdout.strip()
            parent = sorted({sysconfig.get_path("purelib"), sysconfig.get_path("platlib")})
            (pathlib.Path(site) / "parent.pth").write_text("\n".join(parent) + "\n")
            env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
            env["PIP_NO_INDEX"] = "1"
            env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
            python = str(venv / "bin" / "python")
            result = subprocess.run([python, "-m", "pip", "install", "--no-build-isolation",
                                     "--no-index", "--no-deps", str(ROOT)], env=env,
                                    capture_output=True, text=True, check=False)
            self.assertEqual(result.returncode, 0, result.stdout[-3000:] + result.stderr[-3000:])
            code = ("import maskprior, maskprior.torch, maskprior.export; "
                    "print(maskprior.__file__); "
                    "c = maskprior.compile('mask t\\ntokens x[3]\\nopen diagonal\\n'); "
                    "print(c.mask.shape, maskprior.torch.MaskPrior(c, layers=2).bias().shape)")
            result = subprocess.run([python, "-c", code], env=env, cwd=tmp, capture_output=True,
                                    text=True, check=False)
            self.assertEqual(result.returncode, 0, result.stderr)
            lines = result.stdout.splitlines()
            self.assertTrue(lines[0].startswith(str(venv)), lines[0])
            self.assertEqual(lines[1], "(1, 1, 3, 3) torch.Size([2, 1, 3, 3])")
        shutil.rmtree(ROOT / "maskprior.egg-info", ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
