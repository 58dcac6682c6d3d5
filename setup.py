"""setuptools' side of `pip install .` (pyproject.toml): the pure-Python package python/maskprior
and its extension maskprior._maskprior, built by CMake (target maskprior_python).

MASKPRIOR_BUILD_DIR names an already configured CMake build folder to build the target in (the
tests reuse the project's build/); otherwise a fresh folder under build/pip is configured without
LibTorch, tests or benchmarks. CMAKE_BUILD_PARALLEL_LEVEL sets the jobs (default: all CPUs).
"""
import glob
import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))


class CMakeBuild(build_ext):
    def cmake_folder(self):
        folder = os.environ.get("MASKPRIOR_BUILD_DIR")
        if folder and os.path.exists(os.path.join(folder, "CMakeCache.txt")):
            return folder
        folder = folder or os.path.join(ROOT, "build", "pip", "cmake")
        subprocess.check_call(["cmake", "-S", ROOT, "-B", folder, "-DCMAKE_BUILD_TYPE=Release",
                               "-DMASKPRIOR_WITH_TORCH=OFF", "-DMASKPRIOR_BUILD_TESTS=OFF",
                               "-DMASKPRIOR_BUILD_BENCH=OFF",
                               "-DPython3_EXECUTABLE=" + sys.executable])
        return folder

    def build_extension(self, ext):
        folder = self.cmake_folder()
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 1))
        subprocess.check_call(["cmake", "--build", folder, "--target", "maskprior_python",
                               "-j", jobs])
        built = glob.glob(os.path.join(folder, "python", "maskprior", "_maskprior*.so"))
        if not built:
            raise RuntimeError("CMake built no _maskprior*.so in %s/python/maskprior" % folder)
        target = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(built[0], target)


setup(
    packages=["maskprior"],
    package_dir={"maskprior": "python/maskprior"},
    ext_modules=[Extension("maskprior._maskprior", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": os.path.join("build", "pip")}},
    zip_safe=False,
)
