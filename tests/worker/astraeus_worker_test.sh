#!/usr/bin/env bash
# Runs the unit tests of python/astraeus_worker.py with Debian's interpreter (the one the worker
# runner calls). Usage: astraeus_worker_test.sh SOURCE_DIR. Exit 77 (skip) without /usr/bin/python3.
set -u
src=${1:?usage: astraeus_worker_test.sh SOURCE_DIR}
if [ ! -x /usr/bin/python3 ]; then echo "SKIP: /usr/bin/python3 not found (apt-get install python3)"; exit 77; fi
exec /usr/bin/python3 "$src/tests/worker/astraeus_worker_test.py" -v
