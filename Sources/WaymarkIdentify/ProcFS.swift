#if hasFeature(Embedded)
  import CHelperLibc  // waymark-identify: Embedded Swift has no Glibc module
#else
  import CPidfd
  import Glibc
#endif

/// The `/proc` reads that identify a process: the only reader of `/proc/<pid>/exe`, `stat`,
/// `status`, `fd` and `net/tcp` in Waymark.
///
/// Reading another user's `/proc/<pid>/exe` or `fd` takes ptrace read access (the same user, or
/// `CAP_SYS_PTRACE`): waymarkd, which holds no capability, reads them only for its own user's
/// peers and asks `waymark-identify` for the rest.
package enum ProcFS {
  /// The real path of process `pid`'s executable, without the kernel's " (deleted)" suffix;
  /// `nil` when it cannot be read, or when the file at that path (in this process's view) is
  /// not the file the process runs.
  ///
  /// A path names a file only in one mount namespace: a program in a user and mount namespace
  /// of its own can bind-mount its code over a granted path and exec it, and `/proc/<pid>/exe`
  /// then reads as the granted path. The file the kernel ran (device and inode of
  /// `/proc/<pid>/exe`) must be the one at the path here, or the process is not identified. A
  /// path this process cannot see (a sandbox's hidden `/home` or private `/tmp`) is taken as it
  /// reads. A program whose file was replaced since it started (an upgrade) is not identified
  /// until it is started again.
  package static func executablePath(of pid: pid_t) -> String? {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let count = readlink("/proc/\(pid)/exe", &buffer, buffer.count - 1)
    guard count > 0 else { return nil }
    // Bytes, not characters: a path is compared and cut byte for byte (a String compares
    // canonically equivalent texts as equal, and takes Unicode tables the helper links none of).
    var bytes = buffer[..<count].map { UInt8(bitPattern: $0) }
    let deleted = Array(" (deleted)".utf8)
    if bytes.count >= deleted.count, bytes.suffix(deleted.count).elementsEqual(deleted) {
      bytes.removeLast(deleted.count)
    }
    let path = String(decoding: bytes, as: UTF8.self)
    var running = stat()
    guard stat("/proc/\(pid)/exe", &running) == 0 else { return nil }
    var named = stat()
    if stat(path, &named) == 0 {
      guard named.st_dev == running.st_dev, named.st_ino == running.st_ino else {
        errno = ESTALE
        return nil
      }
    } else if errno != ENOENT && errno != EACCES && errno != ENOTDIR {
      return nil
    }
    return path
  }

  /// Field 22 of `/proc/<pid>/stat`: the start time in clock ticks after boot.
  package static func startTime(of pid: pid_t) -> UInt64? {
    statFields(of: pid).flatMap { UInt64($0[22 - 3]) }
  }

  /// The start time (field 22 of `/proc/<pid>/stat`) and the parent's pid (field 4), from one
  /// read of the file.
  static func startTimeAndParent(of pid: pid_t) -> (start: UInt64, parent: pid_t)? {
    guard let fields = statFields(of: pid), let start = UInt64(fields[22 - 3]),
      let parent = pid_t(fields[4 - 3])
    else { return nil }
    return (start, parent)
  }

  /// Fields 3 to 22 of `/proc/<pid>/stat`, field `n` at index `n - 3`; `nil` when the file
  /// cannot be read or has fewer.
  private static func statFields(of pid: pid_t) -> [String]? {
    guard let bytes = read("/proc/\(pid)/stat", limit: 4096) else { return nil }
    // The command name (field 2) is in parentheses and may hold spaces and parentheses: start
    // after the last ')'. Then field 3 is the first word.
    guard let close = bytes.lastIndex(of: UInt8(ascii: ")")) else { return nil }
    let fields = bytes[(close + 1)...].split(separator: UInt8(ascii: " "))
    guard fields.count > 22 - 3 else { return nil }
    return fields.prefix(22 - 2).map { String(decoding: $0, as: UTF8.self) }
  }

  /// The real uid of process `pid` (`/proc/<pid>/status`, first field of `Uid:`).
  package static func realUID(of pid: pid_t) -> uid_t? {
    field("Uid:", of: "/proc/\(pid)/status").flatMap { uid_t(String(decoding: $0, as: UTF8.self)) }
  }

  /// The pid of the process a pidfd refers to (`Pid:` of `/proc/self/fdinfo/<fd>`): `nil` when
  /// the descriptor is no pidfd, or its process has exited (-1) or lives in a pid namespace
  /// this one cannot see (0).
  package static func pid(ofPIDFD pidfd: Int32) -> pid_t? {
    guard
      let pid = field("Pid:", of: "/proc/self/fdinfo/\(pidfd)").flatMap({
        pid_t(String(decoding: $0, as: UTF8.self))
      }), pid > 0
    else { return nil }
    return pid
  }

  /// `false` once the pidfd's process has exited (a pidfd polls readable then).
  package static func isAlive(pidfd: Int32) -> Bool {
    var entry = pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0)
    return poll(&entry, 1, 0) == 0
  }

  /// Now, in clock ticks after boot (the unit of ``startTime(of:)``), rounded up.
  package static func bootTimeTicks() -> UInt64? {
    var now = timespec()
    guard clock_gettime(CLOCK_BOOTTIME, &now) == 0 else { return nil }
    let ticks = UInt64(sysconf(Int32(_SC_CLK_TCK)))
    return UInt64(now.tv_sec) * ticks + UInt64(now.tv_nsec) * ticks / 1_000_000_000 + 1
  }

  /// A pidfd of process `pid` (`pidfd_open(2)`), or -1 with `errno` set. Only as good as the
  /// pid: check the process's start time against the moment the pid was learnt.
  package static func openPIDFD(_ pid: pid_t) -> Int32 {
    pidfd_open(pid, 0)
  }

  /// The process `pidfd` refers to, read through `/proc` and checked against pid reuse: the
  /// start time is read before and after the executable, and the pidfd must still be alive
  /// after both reads (so the pid named that process throughout).
  ///
  /// - Throws: ``IdentifyFailure`` when the descriptor is no pidfd of a live process, or
  ///   `/proc` cannot be read for it (it exited, or this process may not read it).
  package static func process(pidfd: Int32) throws(IdentifyFailure) -> PeerProcess {
    guard let pid = pid(ofPIDFD: pidfd) else {
      throw IdentifyFailure("not a pidfd of a live process in this pid namespace")
    }
    guard let start = startTime(of: pid), let uid = realUID(of: pid) else {
      throw IdentifyFailure("cannot read /proc/\(pid)/stat (\(errnoText()))")
    }
    guard let executable = executablePath(of: pid) else {
      guard errno != ESTALE else {
        throw IdentifyFailure(
          "process \(pid) does not run the file its executable's path names here (a bind mount "
            + "over it, or a file replaced since it started)")
      }
      throw IdentifyFailure("cannot read /proc/\(pid)/exe (\(errnoText()))")
    }
    guard startTime(of: pid) == start, isAlive(pidfd: pidfd) else {
      throw IdentifyFailure("process \(pid) exited while it was identified")
    }
    return PeerProcess(uid: uid, pid: pid, startTime: start, executable: executable)
  }

  /// `strerror(errno)`.
  static func errnoText() -> String { String(cString: strerror(errno)) }

  /// The first word after `key` on the line of file `path` that starts with it, as bytes.
  static func field(_ key: String, of path: String) -> ArraySlice<UInt8>? {
    guard let bytes = read(path, limit: 16384) else { return nil }
    let key = Array(key.utf8)
    for line in bytes.split(separator: UInt8(ascii: "\n")) where line.starts(with: key) {
      return line.dropFirst(key.count).split(whereSeparator: {
        $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t")
      }).first
    }
    return nil
  }

  /// The bytes of file `path`, at most `limit` of them; `nil` (with `errno`) when it cannot be
  /// opened.
  static func read(_ path: String, limit: Int) -> [UInt8]? {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return nil }
    defer { close(descriptor) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: min(limit, 65536))
    while bytes.count < limit {
      #if hasFeature(Embedded)
        let count = CHelperLibc.read(descriptor, &buffer, min(buffer.count, limit - bytes.count))
      #else
        let count = Glibc.read(descriptor, &buffer, min(buffer.count, limit - bytes.count))
      #endif
      guard count > 0 else { break }
      bytes.append(contentsOf: buffer[..<count])
    }
    return bytes
  }
}
