"""What pyproject.toml cannot say: the version (the CMake project's) and that the wheel holds
binaries for one platform (py3-none-PLATFORM), both given by scripts/package.sh."""

import os

from setuptools import setup
from wheel.bdist_wheel import bdist_wheel


class BinaryWheel(bdist_wheel):
    """Any Python 3 (the binaries are run, never imported), one platform."""

    def finalize_options(self):
        super().finalize_options()
        self.root_is_pure = False
        self.plat_name_supplied = True
        self.plat_name = os.environ["GPUMEMTRACE_WHEEL_PLATFORM"]

    def get_tag(self):
        return "py3", "none", super().get_tag()[2]


setup(version=os.environ["GPUMEMTRACE_VERSION"], cmdclass={"bdist_wheel": BinaryWheel})
