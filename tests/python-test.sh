#!/usr/bin/env bash
# python-test.sh [BUILD] - the Python package's pytest tests (python/tests)
# against the library and the dssm binary of BUILD (default build/), with
# Debian's python3, numpy and pytest. Prints pytest's summary line; fails
# when a test fails and when no test was collected (pytest's exit 5).
set -u
cd "$(dirname "$0")/.."
BUILD=${1:-build}
# Debian's interpreter (its dist-packages hold numpy and pytest); another
# python3 earlier on PATH (pyenv, a venv) may lack them.
PYTHON=${PYTHON:-$( [ -x /usr/bin/python3 ] && echo /usr/bin/python3 || echo python3 )}
export DSSM_LIBRARY="$PWD/$BUILD/libdssm.so" DSSM_BIN="$PWD/$BUILD/dssm"
export DSSM_TEST_PREFIX="pyt$$"  # every test's DSSM_NAMESPACE starts with it
export PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}" PYTHONDONTWRITEBYTECODE=1
for f in "$DSSM_LIBRARY" "$DSSM_BIN"; do
	[ -e "$f" ] || { echo "python-test: $f is missing (make all)"; exit 1; }
done
"$PYTHON" -m pytest -q -p no:cacheprovider python/tests
rc=$?
# segments left by a test that died before its cleanup
rm -f /dev/shm/dssm:"$DSSM_TEST_PREFIX"-* 2>/dev/null
case $rc in
0) ;;
5) echo "python-test: no tests collected"; exit 1 ;;
*) echo "python-test: pytest exited $rc"; exit 1 ;;
esac
