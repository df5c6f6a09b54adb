"""tests/test_importers.py without onnx: only its ONNX tests skip; the Caffe and load_model tests still run."""
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# `import onnx` raises ImportError when sys.modules holds None for it, as when onnx is not installed
RUN = ("import sys; sys.modules['onnx'] = None; import pytest; "
       "sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', '-rs', 'tests/test_importers.py']))")


def test_importer_tests_without_onnx_skip_only_the_onnx_tests():
    out = subprocess.run([sys.executable, "-c", RUN], cwd=ROOT, capture_output=True, text=True, timeout=300).stdout
    summary = out.strip().splitlines()[-1]
    passed = int(re.search(r"(\d+) passed", summary).group(1)) if "passed" in summary else 0
    skipped = int(re.search(r"(\d+) skipped", summary).group(1)) if "skipped" in summary else 0
    source = (ROOT / "tests" / "test_importers.py").read_text(encoding="utf-8")
    assert "failed" not in summary and "error" not in summary, out[-2000:]
    assert skipped == source.count("@needs_onnx")           # each ONNX test, and nothing else
    assert passed >= 10                                     # the Caffe prototxt tests among them
    assert "test_prototxt_fixture" not in out and "onnx is not installed" in out
