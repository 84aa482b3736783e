#!/usr/bin/env bash
# Builds the API reference of the library products with the toolchain's `docc`, and fails when a
# public symbol has no doc comment or DocC warns about anything (an unresolved ``link``, a topic
# that names no symbol, a bad directive). Scripts/test.sh runs it after the build; alone:
#
#   swift build -j 2 --build-tests && Scripts/docs.sh
#
# For each module below: `swift symbolgraph-extract` reads the built module (no rebuild) into a
# symbol graph, every public or open symbol of the graph must carry a doc comment, and
# `docc convert --warnings-as-errors` turns Sources/<Module>/<Module>.docc and the graph into
# .build/docs/<Module>.doccarchive (static HTML: `python3 -m http.server -d <archive>`, then
# /documentation/<module>/). Before the real check, the undocumented-symbol check is shown to
# catch an undocumented property, and to pass documented and compiler-synthesized members, on a
# small module compiled here; and docc is shown to fail on a topic that names no symbol.
set -euo pipefail
cd "$(dirname "$0")/.."

# The library products an application imports (Package.swift), and WaymarkClient, which
# `Waymark` re-exports.
modules=(
  Waymark WaymarkCoreLocation WaymarkCore WaymarkClient GPSD NMEA WaymarkStore
  WaymarkNotifications WaymarkGazetteer
)

bin="$(swift build --show-bin-path)"
out=.build/docs
rm -rf "$out"
mkdir -p "$out/symbol-graphs"
triple="$(swiftc -print-target-info \
  | python3 -c 'import json, sys; print(json.load(sys.stdin)["target"]["triple"])')"
# Every C module map of the package (CGPS, CSQLite, …): a module that imports one needs it.
includes=()
for map in Sources/*/module.modulemap; do includes+=(-I "$(dirname "$map")"); done

# extract MODULE OUTPUT-DIR SEARCH-DIR: the public symbol graph of a built module.
extract() {
  mkdir -p "$2"
  swift symbolgraph-extract -module-name "$1" -target "$triple" -I "$3" "${includes[@]}" \
    -module-cache-path "$out/module-cache" -minimum-access-level public \
    -skip-synthesized-members -output-dir "$2"
}

# undocumented GRAPH-DIR…: prints `file:line: Module.Path (kind)` for every public or open
# symbol of the graphs without a doc comment, one per line; exit status 1 when there is one.
# A member that implements a documented protocol requirement carries the requirement's comment
# in the graph (DocC shows it), so it counts as documented; synthesized members (Equatable's
# `==`, Codable's `init(from:)`, an enum's `hashValue`, protocol extensions' defaults) are not
# in the graph at all (`-skip-synthesized-members`, and the compiler's implicit declarations).
undocumented() {
  python3 - "$@" <<'EOT'
import glob, json, os, sys
from urllib.parse import unquote, urlparse

found, seen = [], set()
for directory in sys.argv[1:]:
    for path in sorted(glob.glob(os.path.join(directory, "*.symbols.json"))):
        graph = json.load(open(path))
        module = graph["module"]["name"]
        for symbol in graph["symbols"]:
            precise = symbol["identifier"]["precise"]
            if (symbol.get("accessLevel") not in ("public", "open") or "docComment" in symbol
                    or "::SYNTHESIZED::" in precise or precise in seen):
                continue
            seen.add(precise)
            location = symbol.get("location", {})
            file = os.path.relpath(unquote(urlparse(location.get("uri", "file:///?")).path))
            line = location.get("position", {}).get("line", -1) + 1
            name = ".".join([module] + symbol["pathComponents"])
            found.append(f"{file}:{line}: {name} ({symbol['kind']['displayName'].lower()})")
for row in sorted(found):
    print(row)
sys.exit(1 if found else 0)
EOT
}

echo "== undocumented-symbol check, positive control"
control="$out/control"
mkdir -p "$control"
cat >"$control/Control.swift" <<'EOT'
/// A documented structure.
public struct Documented: Equatable, Codable { public var undocumentedProperty = 0 }
/// A documented function.
public func documented() {}
/// A documented enumeration: its `rawValue` and `init?(rawValue:)` are the compiler's.
public enum Kind: String {
  /// A documented case.
  case one
}
EOT
swiftc -parse-as-library -module-name Control -emit-module -emit-module-path \
  "$control/Control.swiftmodule" "$control/Control.swift"
extract Control "$control/graph" "$control"
report="$(undocumented "$control/graph" || true)"
expected="$control/Control.swift:2: Control.Documented.undocumentedProperty (instance property)"
if [ "$report" != "$expected" ]; then
  echo "error: the check should report exactly Documented.undocumentedProperty, and reported:"
  echo "${report:-nothing}"
  exit 1
fi
echo "reports the undocumented property alone: ok"
echo "== docc convert --warnings-as-errors, positive control"
mkdir -p "$control/Control.docc"
printf '# ``Control``\n\nA module.\n\n## Topics\n\n- ``Documented``\n- ``Missing``\n' \
  >"$control/Control.docc/Control.md"
if docc convert "$control/Control.docc" --additional-symbol-graph-dir "$control/graph" \
  --output-path "$control/Control.doccarchive" --warnings-as-errors >"$control/docc.log" 2>&1; then
  echo "error: docc accepted a topic that names no symbol (\`\`Missing\`\`)"
  exit 1
fi
grep -q "Missing" "$control/docc.log" || {
  echo "error: docc failed on the control catalog, but not for its unresolved link:"
  cat "$control/docc.log"
  exit 1
}
echo "fails on the unresolved link: ok"

echo "== symbol graphs ($bin)"
for module in "${modules[@]}"; do
  [ -f "$bin/Modules/$module.swiftmodule" ] || {
    echo "error: $bin/Modules/$module.swiftmodule is missing: run swift build first"
    exit 1
  }
  extract "$module" "$out/symbol-graphs/$module" "$bin/Modules"
done
graphs=("${modules[@]/#/$out/symbol-graphs/}")
count="$(python3 -c 'import glob, json, sys
files = glob.glob(sys.argv[1] + "/*/*.symbols.json")
print(sum(len(json.load(open(f))["symbols"]) for f in files))' "$out/symbol-graphs")"
echo "$count public symbols in ${#modules[@]} modules"

echo "== every public symbol documented"
if ! report="$(undocumented "${graphs[@]}")"; then
  echo "$report"
  cat <<'EOT'
error: these public or open symbols have no doc comment. Write a `///` comment directly above
each declaration (above its attributes): a one-line summary that gives units (metres, seconds,
degrees, m/s), a blank line, then the details and `- Parameters:`, `- Returns:`, `- Throws:`
where they apply. A member implementing a documented protocol requirement needs none. Or make
the symbol internal if no application needs it. Then run Scripts/docs.sh again.
EOT
  exit 1
fi
echo "none undocumented"

echo "== docc convert (warnings are errors)"
for module in "${modules[@]}"; do
  docc convert "Sources/$module/$module.docc" \
    --additional-symbol-graph-dir "$out/symbol-graphs/$module" \
    --fallback-display-name "$module" --fallback-bundle-identifier "org.waymark.$module" \
    --output-path "$out/$module.doccarchive" --warnings-as-errors || {
    echo "error: DocC warned about the documentation of $module (above; its paths are relative"
    echo "to Sources/$module/$module.docc)."
    cat <<'EOT'
Each module is its own archive, so a ``link`` resolves only to a public symbol of the same
module: write another module's symbol (Location, Fix, BrokerError, …) or an internal one in
code voice, `Location.course`, not ``Location/course``. An ambiguous link takes the suffix
DocC suggests, ``observe(_:)-(Fix)``; a parameter list names the parameters of the
declaration. A topic of Sources/<Module>/<Module>.docc/<Module>.md must name a public symbol
of the module or an article of the catalog, <doc:GettingStarted>. Then run Scripts/docs.sh
again.
EOT
    exit 1
  }
done
echo "API reference: $out/<Module>.doccarchive for ${modules[*]}"
