import Glibc

/// Wakes the broker when the grants may have changed: inotify(7) on the directories of the
/// store (its file and its WAL) and of the location-services switch, so that no timer runs
/// while nothing changes. The broker then asks the store whether its grants did change
/// (``GrantStore/changeMark()``) and reads the switch, at most once per `grantRefreshSeconds`.
///
/// A directory that does not exist yet (`/etc/waymark` on a machine without a configuration)
/// is replaced by its parent until it appears: its creation wakes the broker, which then
/// watches it too.
final class ChangeWatch {
  /// The inotify descriptor: readable when something changed.
  let descriptor: Int32
  private let wanted: [String]
  private var watched: Set<String> = []

  /// Watches `directories` (or their parents, for those that do not exist); `nil` when nothing
  /// can be watched (the broker then checks on a timer while clients are connected).
  ///
  /// Wraps `inotify_init1(2)` and `inotify_add_watch(2)`.
  init?(directories: [String]) {
    guard !directories.isEmpty else { return nil }
    let descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
    guard descriptor >= 0 else { return nil }
    self.descriptor = descriptor
    wanted = directories
    watchWhatExists()
    guard !watched.isEmpty else { return nil }
  }

  deinit { close(descriptor) }

  /// Reads the pending events (what changed does not matter: the store is asked) and watches
  /// the directories that appeared meanwhile.
  ///
  /// - Returns: whether there was an event.
  @discardableResult
  func drain() -> Bool {
    var buffer = [UInt8](repeating: 0, count: 4096)
    var any = false
    while read(descriptor, &buffer, buffer.count) > 0 { any = true }
    if any { watchWhatExists() }
    return any
  }

  private func watchWhatExists() {
    let events = UInt32(
      IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE
        | IN_ATTRIB)
    for directory in wanted where !watched.contains(directory) {
      if inotify_add_watch(descriptor, directory, events) >= 0 {
        watched.insert(directory)
      } else if let slash = directory.lastIndex(of: "/") {
        let parent = slash == directory.startIndex ? "/" : String(directory[..<slash])
        if !watched.contains(parent), inotify_add_watch(descriptor, parent, events) >= 0 {
          watched.insert(parent)
        }
      }
    }
  }
}
