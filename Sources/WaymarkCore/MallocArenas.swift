import Glibc

/// How many malloc arenas glibc may create (`mallopt(M_ARENA_MAX, n)`, found at run time: the
/// Glibc module does not export it).
///
/// By default glibc gives each thread that allocates while another holds the lock an arena of
/// its own, up to eight per core, and an arena keeps the pages its thread freed. A daemon whose
/// threads are mostly asleep gains nothing from them: waymarkd limits itself to one before its
/// first thread starts, which with MQTT on (the outbox's writer, libmosquitto's thread) keeps
/// about 3.7 MB less resident after a 10 Hz drive (BENCHMARKS.md, "Daemon").
public enum MallocArenas {
  private typealias Option = @convention(c) (Int32, Int32) -> Int32

  /// glibc's `M_ARENA_MAX` (malloc.h).
  private static let arenaMaximum: Int32 = -8

  /// Allows at most `count` arenas from now on. Call it before any other thread starts.
  ///
  /// - Returns: whether glibc took the setting (`false` where `mallopt` does not exist).
  @discardableResult
  public static func limit(to count: Int32) -> Bool {
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallopt") else {
      return false
    }
    return unsafeBitCast(symbol, to: Option.self)(arenaMaximum, max(1, count)) == 1
  }
}
