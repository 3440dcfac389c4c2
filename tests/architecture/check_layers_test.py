#!/usr/bin/env python3
"""check_layers.py refuses what it must: an include up the stages, between siblings, by a
bare name, from a folder that is no stage, and stages that link in a circle; and it passes
the analyzer as it is (with the stages CMake wrote)."""
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
CHECK = os.path.join(HERE, "check_layers.py")
STAGES = """\
base:
model: base
read: base
analysis: read model
views: analysis
"""


def run(stages_text, files):
    with tempfile.TemporaryDirectory() as root:
        for path, text in files.items():
            os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
            with open(os.path.join(root, path), "w", encoding="utf-8") as f:
                f.write(text)
        stages = os.path.join(root, "stages.txt")
        with open(stages, "w", encoding="utf-8") as f:
            f.write(stages_text)
        r = subprocess.run([sys.executable, CHECK, stages, os.path.join(root, "a")],
                           capture_output=True, text=True)
        return r.returncode, r.stderr


def tree(extra=None):
    files = {
        "a/base/bytes.h": "#pragma once\n",
        "a/model/report.h": '#include "base/bytes.h"\n',
        "a/read/reader.h": '#include "base/bytes.h"\n#include <gpumemtrace/trace_format.h>\n',
        "a/analysis/lifetimes.h": '#include "read/reader.h"\n#include "model/report.h"\n',
        "a/analysis/caching/blocks.cpp": '#include "analysis/lifetimes.h"\n',
        "a/views/text.cpp": '#include "analysis/lifetimes.h"\n#include "base/bytes.h"\n',
        "a/main.cpp": '#include "views/text.cpp"\n',
    }
    files.update(extra or {})
    return files


class CheckLayers(unittest.TestCase):
    def test_a_clean_tree_passes(self):
        rc, err = run(STAGES, tree())
        self.assertEqual((rc, err), (0, ""))

    def test_an_include_up_the_stages_fails(self):
        rc, err = run(STAGES, tree({"a/read/bad.h": '#include "analysis/lifetimes.h"\n'}))
        self.assertEqual(rc, 1)
        self.assertIn("read/bad.h:1: read/ includes analysis/lifetimes.h", err)

    def test_a_sibling_include_fails(self):
        rc, err = run(STAGES, tree({"a/model/bad.h": '\n#include "read/reader.h"\n'}))
        self.assertEqual(rc, 1)
        self.assertIn("model/bad.h:2: model/ includes read/reader.h", err)

    def test_a_subfolder_belongs_to_its_stage(self):
        rc, err = run(STAGES, tree({"a/analysis/caching/bad.h": '#include "views/text.cpp"\n'}))
        self.assertEqual(rc, 1)
        self.assertIn("analysis/ includes views/text.cpp", err)

    def test_a_bare_name_that_hides_the_stage_fails(self):
        rc, err = run(STAGES, tree({"a/read/bad.h": '#include "bytes.h"\n'}))
        self.assertEqual(rc, 1)
        self.assertIn('include "bytes.h" by its stage folder', err)

    def test_a_folder_that_is_no_stage_fails(self):
        rc, err = run(STAGES, tree({"a/misc/x.h": "#pragma once\n"}))
        self.assertEqual(rc, 1)
        self.assertIn("folder misc/ is no stage", err)

    def test_stages_in_a_circle_fail(self):
        rc, err = run(STAGES + "read: analysis\n", tree())
        self.assertEqual(rc, 1)
        self.assertIn("stages link in a circle", err)

    @unittest.skipUnless(os.environ.get("GMT_STAGES_FILE"), "run by ctest with the build's stages")
    def test_the_analyzer_passes(self):
        r = subprocess.run([sys.executable, CHECK, os.environ["GMT_STAGES_FILE"],
                            os.environ["GMT_ANALYZER_DIR"]], capture_output=True, text=True)
        self.assertEqual((r.returncode, r.stderr), (0, ""))


if __name__ == "__main__":
    unittest.main()
