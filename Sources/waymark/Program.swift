/// Which program the multi-call executable runs: the last component of the name it was started
/// under (`argv[0]`), as busybox and systemd's tools choose. `waymarkd` is the daemon; any other
/// name (`waymark`, `swift run`'s path, a copy under another name) is the command line tool.
enum Program: Equatable {
  /// `waymarkd`: `WaymarkDaemon.main`.
  case daemon
  /// `waymark`: `WaymarkCommandLine.main`.
  case commandLine

  /// The program of `name`, `argv[0]` as given (a path or a bare name).
  init(invokedAs name: String) {
    let base = name.split(separator: "/", omittingEmptySubsequences: false).last ?? ""
    self = base == "waymarkd" ? .daemon : .commandLine
  }
}
