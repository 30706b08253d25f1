"""The README's Python example works as written."""

import os
import re
import subprocess
import sys

from conftest import REPO


def test_readme_example(namespace):
    text = open(os.path.join(REPO, "README.md")).read()
    m = re.search(r"^## Python\n+```python\n(.*?)```", text, re.S | re.M)
    assert m, "README.md has no ## Python section with a python block"
    code = m.group(1)
    assert len(code.strip().splitlines()) == 5
    env = dict(os.environ, DSSM_NAMESPACE=namespace,
               PYTHONPATH=os.path.join(REPO, "python"))
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, env=env,
                       timeout=60)
    assert p.returncode == 0, p.stderr.decode()
    tid, t, data = p.stdout.decode().split()
    assert tid == "0" and float(t) > 1.7e9 and data == "b'hi'"
