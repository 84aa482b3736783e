#!/usr/bin/env bash
# Regenerates Sources/waymark/code-order.txt, the order in which the release link lays out the
# functions waymarkd runs once it is ready (Package.swift passes it to the linker with
# `--section-ordering-file`; every target is compiled with one section a function). Placed
# together, those functions fill a few hundred contiguous pages instead of touching pages all
# over the 19 MB executable, so the daemon's resident code after a drive stays small
# (BENCHMARKS.md, "Code laid out by use").
#
# How: waymarkd runs under valgrind's callgrind through the daemon and idle benchmarks (a drive
# through 10,000 places, with MQTT on, with a client watching the location socket); its
# counters are zeroed once it has started, and every function of the executable that ran after that
# is listed, in first-seen order. Names that no longer exist are ignored by the linker, so a
# stale list costs memory, never correctness: run this after changing the daemon's per-fix path.
#
# usage: Scripts/code-order.sh            (about 10 minutes; needs valgrind)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "Error: valgrind missing (apt-get install valgrind)" >&2; exit 69; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
swift build -c release -j 2 --static-swift-stdlib --scratch-path .build-static --product waymark
swift build -c release -j 2 --product waymark-bench
binary="$PWD/.build-static/release/waymark"
ln -f "$binary" "$work/waymarkd"
# waymarkd under callgrind: the counters are zeroed when it logs that it has started (just
# before it gives back the code that start-up ran), so that start-up's functions are not listed.
# Its log is its standard error, a file the daemon benchmark names.
cat > "$work/wrapper" <<WRAPPER
#!/usr/bin/env bash
log=\$(readlink -f /proc/\$\$/fd/2)
(if [ -f "\$log" ]; then
  for _ in \$(seq 600); do
    grep -q "started: store" "\$log" 2>/dev/null && break
    sleep 0.1
  done
else
  sleep 10  # a log that is no file (the idle benchmark's): the daemon is up by then
fi
callgrind_control -z \$\$ >/dev/null 2>&1) &
exec valgrind --tool=callgrind --demangle=no \\
  --callgrind-out-file="$work/callgrind.%p.out" "$work/waymarkd" "\$@"
WRAPPER
chmod +x "$work/wrapper"
.build/release/waymark-bench daemon --daemon "$work/wrapper" --seconds 60 >/dev/null
.build/release/waymark-bench daemon --daemon "$work/wrapper" --seconds 60 --mqtt >/dev/null
.build/release/waymark-bench idle --daemon "$work/wrapper" --seconds 20 --fix-seconds 40 >/dev/null
python3 Scripts/code-order.py "$work"/callgrind.*.out > Sources/waymark/code-order.txt
echo "$(wc -l < Sources/waymark/code-order.txt) functions in Sources/waymark/code-order.txt"
