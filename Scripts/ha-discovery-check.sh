#!/usr/bin/env bash
# Checks waymarkd's Home Assistant discovery configs with Home Assistant's own schemas: installs
# a released Home Assistant from PyPI into .build/homeassistant (once; a few minutes), then runs
# HomeAssistantSchemaTests (its schemas) and HomeAssistantLiveTests (that Home Assistant running,
# fed by waymarkd through mosquitto), which are skipped (with their reason) wherever it is not.
#   Scripts/ha-discovery-check.sh [version]    (default 2024.3.3, the last for Python 3.11)
set -euo pipefail
cd "$(dirname "$0")/.."
version="${1:-2024.3.3}"
venv=.build/homeassistant
if ! "$venv/bin/python" -c "import homeassistant" 2>/dev/null; then
  python3 -m venv "$venv"
  # josepy 2 removed what this release's cloud component imports at its first HTTP request.
  "$venv/bin/pip" install -q "homeassistant==$version" "josepy<2"
fi
swift build -j 2 --build-tests
swift test --skip-build --no-parallel --filter "HomeAssistantSchemaTests|HomeAssistantLiveTests"
