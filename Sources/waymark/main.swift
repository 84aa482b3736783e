// The one executable of `waymark` and `waymarkd` (a multi-call binary, as busybox's): the name
// it was started under chooses the program. Installed as one file with a hard link
// (`/usr/bin/waymark` and `/usr/bin/waymarkd`, package-deb.sh and install.sh), so that each name
// keeps its own `/proc/<pid>/exe` and so its identity as a client of the daemon
// (docs/architecture.md, "One executable").
import FoundationEssentials
import Glibc
import WaymarkCLI
import WaymarkDaemon
import WaymarkDaemonConfiguration

// The daemon runs without Swift concurrency (see `WaymarkDaemon.main`): called without `await`,
// it never leaves this thread for the concurrency pool.
if Program(invokedAs: CommandLine.arguments.first ?? "") == .daemon {
  exit(WaymarkDaemon.main(CommandLine.arguments))
}
exit(await WaymarkCommandLine.main(CommandLine.arguments))
