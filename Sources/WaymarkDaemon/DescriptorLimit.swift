import Glibc

/// The daemon's open-file limit (RLIMIT_NOFILE), raised at start so that `socket-clients`
/// connections fit.
///
/// systemd starts services with a soft limit of 1,024 descriptors (the hard limit is far
/// higher): with the default `socket-clients = 1024` the daemon ran out of descriptors near a
/// thousand clients, and the next peer's `/proc/<pid>/stat` could not be opened, so it was
/// refused as "gone" (found by the fault campaign's load stage). The daemon now raises its soft
/// limit towards the hard one, and serves no more clients than the limit allows.
enum DescriptorLimit {
  /// Descriptors kept for everything but the clients: the store, gpsd, the listeners, pipes,
  /// hooks, MQTT, and the two or three a peer's identification opens.
  static let reserve: UInt64 = 64

  /// The soft limit to ask for: room for `clients` connections and the reserve, at most the
  /// hard limit, never below the current soft limit.
  static func target(clients: Int, soft: UInt64, hard: UInt64) -> UInt64 {
    let needed = UInt64(max(0, clients)) + reserve
    return max(soft, min(needed, hard))
  }

  /// How many clients a soft limit of `soft` descriptors leaves room for.
  static func clients(allowedBy soft: UInt64) -> Int {
    soft > reserve ? Int(min(soft - reserve, UInt64(Int.max))) : 0
  }

  /// Raises the soft limit for `clients` connections; returns the soft limit before and after.
  static func raise(forClients clients: Int) -> (before: UInt64, after: UInt64) {
    var limit = rlimit()
    let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    guard getrlimit(resource, &limit) == 0 else { return (0, 0) }
    let before = UInt64(limit.rlim_cur)
    let wanted = target(clients: clients, soft: before, hard: UInt64(limit.rlim_max))
    guard wanted > before else { return (before, before) }
    limit.rlim_cur = rlim_t(wanted)
    guard setrlimit(resource, &limit) == 0 else { return (before, before) }
    return (before, wanted)
  }
}
