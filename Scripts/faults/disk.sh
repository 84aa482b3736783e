# The "disk" stage of Scripts/faults.sh, sourced by it (uses its smoke, waymark, waymarkd,
# scratch, row, drive, compare_visits and reference_visits). Needs root: faults.sh runs in a
# private mount namespace (unshare -m), so the file systems mounted here vanish with it.
#
# 1. A live drive under waymarkd with its store on a small tmpfs that fills up mid-stay (a
#    filler file takes every free byte, after an arrival) and is freed a second after the
#    departure: the daemon must log the failure once per episode and its end once, keep
#    monitoring (the departure is still logged), hold what it could not write and write it once
#    space is back (every event logged while writes fail is held, each fill holds at least the
#    departure it spans, and every held event is recorded once space is back, as many as the
#    daemon's "writes succeed again" lines report); `PRAGMA integrity_check` ok and the visits exactly the
#    uninterrupted run's, every one, none more, to the millisecond: no fix is lost, so nothing
#    may move (the README's runs measured a largest shift of 0.0 s).
# 2. Stores the daemon and `waymark visits` cannot use: garbage bytes, a newer schema version,
#    a read-only file and a read-only directory (run as nobody: root ignores file modes), a
#    read-only file system. One line naming the file and what is wrong, the documented exit code (docs/guide/daemon.md),
#    the file byte for byte as before.

# Waits until the daemon's log ($1) has $3 lines matching $2; fails when the daemon stopped.
disk_wait_for() {
  local seen
  for _ in $(seq 1200); do
    seen=$(grep -c -- "$2" "$1" 2> /dev/null)
    ((${seen:-0} >= $3)) && return 0
    grep -q 'stopped;' "$1" 2>/dev/null && return 1
    sleep 0.1
  done
  return 1
}

# Fills the file system $1 at the next arrivals in log $2, $3 times; prints the fills done.
disk_fill_cycles() {
  local fs=$1 log=$2 wanted=$3 fills=0 arrivals departures
  for _ in $(seq "$wanted"); do
    arrivals=$(grep -c 'ARRIVAL at' "$log" 2> /dev/null)
    disk_wait_for "$log" 'ARRIVAL at' $((${arrivals:-0} + 1)) || break
    sleep 0.5
    departures=$(grep -c 'DEPARTURE from' "$log")
    dd if=/dev/zero of="$fs/filler" bs=64k status=none 2> /dev/null
    fills=$((fills + 1))
    disk_wait_for "$log" 'DEPARTURE from' $((departures + 1))
    sleep 1
    rm -f "$fs/filler"
  done
  rm -f "$fs/filler"
  echo "$fills"
}

disk_full_drive() {
  local start=$SECONDS fs="$scratch/disk-fs" log="$scratch/disk.daemon.log"
  mkdir -p "$fs"
  if ! mount -t tmpfs -o size=16m tmpfs "$fs" 2> "$scratch/disk.mount.err"; then
    row "store on a tmpfs that fills up mid-drive" "0 fill(s)" 1 0 \
      "cannot mount a tmpfs: $(head -c 100 "$scratch/disk.mount.err")"
    return
  fi
  local store="$fs/waymark.db"
  "$waymark" places import Demo/places.geojson --store "$store" > /dev/null 2>&1
  "$waymark" auth grant waymarkd always --store "$store" > /dev/null
  disk_fill_cycles "$fs" "$log" "$disk_fills" > "$scratch/disk.fills" &
  local controller=$!
  drive "$reference_log" "$store" 0 "$disk_rate" disk > /dev/null
  wait "$controller"
  local fills episodes recoveries attempts held holds during reported lost integrity
  fills=$(cat "$scratch/disk.fills")
  episodes=$(grep -c 'store: cannot write' "$log")
  recoveries=$(grep -c 'writes succeed again' "$log")
  attempts=$(grep -o 'after [0-9]* failed attempt' "$log" | awk '{ n += $2 } END { print n + 0 }')
  held=$(grep -c 'recorded the held' "$log")
  holds=$(grep -c 'is held until it can be written' "$log")
  # The events the daemon logged while its writes failed (each must be held), and the held
  # events its "writes succeed again" lines say it recorded.
  during=$(awk '/store: cannot write/ { failing = 1 } /writes succeed again/ { failing = 0 }
    failing && /^<5>(ARRIVAL at|DEPARTURE from)/ { n++ } END { print n + 0 }' "$log")
  reported=$(grep -o '; [0-9]* held event(s) recorded' "$log" | awk '{ n += $2 } END { print n + 0 }')
  lost=$(grep -c 'store: cannot record\|could not be written' "$log")
  integrity=$(sqlite3 "$store" 'PRAGMA integrity_check;' 2>&1)
  "$waymark" visits --store "$store" --format ndjson > "$scratch/disk.visits" 2>&1
  read -r long_count largest_shift problem_count problem_text \
    <<< "$(compare_visits "$scratch/reference.visits" "$scratch/disk.visits" 0 all)"
  local failures=${problem_count:-1} notes=""
  ((fills == disk_fills)) || { failures=$((failures + 1)); notes+="only $fills fill(s); "; }
  ((episodes == fills && recoveries == fills)) || {
    failures=$((failures + 1))
    notes+="logged $episodes failure(s) and $recoveries recovery(ies) for $fills fill(s); "
  }
  ((holds == during && held == holds && reported == held && holds >= fills)) || {
    failures=$((failures + 1))
    notes+="$during event(s) while full, $holds held, $held recorded later ($reported reported)"
    notes+=" for $fills fill(s); "
  }
  ((lost == 0)) || { failures=$((failures + 1)); notes+="$lost event(s) not written; "; }
  [ "$integrity" = "ok" ] || { failures=$((failures + 1)); notes+="integrity_check: $integrity; "; }
  (($(grep -c '^<5>started' "$log") == 1)) && grep -q 'stopped;' "$log" \
    || { failures=$((failures + 1)); notes+="the daemon did not run through; "; }
  notes+="$episodes episode(s) logged once each and $recoveries end(s); $attempts failed write"
  notes+=" attempt(s) retried; $held held event(s) recorded (of $holds held, $during while"
  notes+=" full); integrity_check"
  notes+=" $integrity; $long_count visit(s) compared exactly, both ways, largest shift"
  notes+=" ${largest_shift:-?} s"
  [ -n "$problem_text" ] && notes+="; $problem_text"
  row "store on a tmpfs that fills up mid-drive" "$fills fill(s)" "$failures" \
    $((SECONDS - start)) "$notes"
  ((failures == 0)) || cp "$log" /tmp/waymark-faults-disk.log 2>/dev/null
  umount "$fs" 2>/dev/null
}

# Runs waymarkd and `waymark visits` on store $2 (as user $3: root or nobody); checks exit
# code $4 and text $5 in the one line of standard error of each ($6: visits' code when it
# differs), and that the file is unchanged. Prints nothing; appends failures to disk_problems.
disk_bad_store() {
  local name=$1 store=$2 user=$3 code=$4 text=$5 visits_code=${6:-$4} before after
  local as=()
  [ "$user" = nobody ] && as=(setpriv --reuid=65534 --regid=65534 --clear-groups)
  printf 'gpsd = 127.0.0.1:1\nstore = %s\nsocket = none\n' "$store" > "$scratch/bad.conf"
  chmod 644 "$scratch/bad.conf"
  before=$(sha256sum < "$store")
  timeout 20 "${as[@]}" "$waymarkd" --config "$scratch/bad.conf" > /dev/null 2> "$scratch/bad.err"
  local status=$?
  if ((status != code)) || ! grep -q -- "$text" "$scratch/bad.err" \
    || (($(grep -c . "$scratch/bad.err") != 1)); then
    disk_problems+=("$name: waymarkd exit $status: $(head -c 160 "$scratch/bad.err")")
  fi
  "${as[@]}" "$waymark" visits --store "$store" > /dev/null 2> "$scratch/bad.err"
  status=$?
  if ((status != visits_code)) || { ((visits_code != 0)) && ! grep -q -- "$text" "$scratch/bad.err"; }; then
    disk_problems+=("$name: waymark visits exit $status: $(head -c 160 "$scratch/bad.err")")
  fi
  after=$(sha256sum < "$store")
  [ "$before" = "$after" ] || disk_problems+=("$name: the file changed")
  disk_cases=$((disk_cases + 1))
}

disk_bad_stores() {
  local start=$SECONDS dir="$scratch/bad" good="$scratch/bad-good.db"
  disk_problems=() disk_cases=0
  mkdir -p "$dir" && chmod 755 "$scratch" "$dir"
  "$waymark" places import Demo/places.geojson --store "$good" > /dev/null 2>&1
  "$waymark" auth grant waymarkd always --store "$good" > /dev/null
  python3 -c "import random; r = random.Random(13); open('$dir/garbage.db', 'wb').write(bytes(r.randrange(256) for _ in range(8192)))"
  disk_bad_store garbage "$dir/garbage.db" root 65 'not a database'
  cp "$good" "$dir/newer.db" && sqlite3 "$dir/newer.db" 'PRAGMA user_version = 999;'
  disk_bad_store "newer schema" "$dir/newer.db" root 65 'schema version 999'
  mkdir -p "$dir/file" "$dir/folder"
  cp "$good" "$dir/file/waymark.db" && cp "$good" "$dir/folder/waymark.db"
  chown -R 65534:65534 "$dir/file" "$dir/folder"
  chmod 444 "$dir/file/waymark.db" && chmod 555 "$dir/folder"
  # A read-only file can still be read: waymark visits prints it (exit 0).
  disk_bad_store "read-only file" "$dir/file/waymark.db" nobody 74 'is read-only for this user' 0
  disk_bad_store "read-only directory" "$dir/folder/waymark.db" nobody 74 'in a directory this user cannot write'
  chmod 755 "$dir/folder"
  mkdir -p "$dir/ro"
  if mount -t tmpfs -o size=4m tmpfs "$dir/ro" 2> /dev/null; then
    cp "$good" "$dir/ro/waymark.db" && mount -o remount,ro "$dir/ro"
    disk_bad_store "read-only file system" "$dir/ro/waymark.db" root 74 'on a read-only file system'
    umount "$dir/ro"
  else
    disk_problems+=("read-only file system: cannot mount a tmpfs")
  fi
  local notes="garbage and newer schema exit 65, read-only file (waymarkd; visits reads it),"
  notes+=" directory and file system exit 74; one line naming the file; every file unchanged"
  ((${#disk_problems[@]} == 0)) || notes=$(printf '%s; ' "${disk_problems[@]}")
  row "bad stores: garbage, newer schema, read-only file, directory, file system" \
    "$disk_cases stores x 2 programs" "${#disk_problems[@]}" $((SECONDS - start)) "$notes"
}

if [ "$(id -u)" != 0 ]; then
  row "disk: store on a full file system, bad stores" "0" 1 0 "needs root (mount, setpriv)"
else
  reference_visits
  disk_full_drive
  disk_bad_stores
fi
