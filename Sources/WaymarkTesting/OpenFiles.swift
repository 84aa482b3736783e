import Foundation

/// The open file descriptors of a process, as `/proc/<pid>/fd` and `/proc/<pid>/fdinfo` show
/// them: how a test counts the connections a process holds to a file.
package enum OpenFiles {
  /// How a descriptor was opened: its `O_ACCMODE` bits.
  package enum Access: Sendable, Equatable {
    /// `O_RDONLY`.
    case readOnly
    /// `O_WRONLY`.
    case writeOnly
    /// `O_RDWR`.
    case readWrite
  }

  /// The access mode of every descriptor of process `processID` that is open on `path` (its
  /// `/proc/<pid>/fd` link names exactly `path`), one entry per descriptor.
  ///
  /// - Parameters:
  ///   - path: the file (resolved with `realpath(3)` when it exists, as the kernel names it).
  ///   - processID: the process; this one by default.
  package static func accessModes(of path: String, processID: pid_t = getpid()) -> [Access] {
    let directory = "/proc/\(processID)/fd"
    let resolved = realpath(path, nil)
    defer { free(resolved) }
    let target = resolved.map { String(cString: $0) } ?? path
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
    return entries.compactMap { entry -> Access? in
      guard
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "\(directory)/\(entry)"))
          == target,
        let info = try? String(
          contentsOfFile: "/proc/\(processID)/fdinfo/\(entry)", encoding: .utf8),
        let line = info.split(separator: "\n").first(where: { $0.hasPrefix("flags:") }),
        let flags = Int32(
          line.dropFirst("flags:".count).trimmingCharacters(in: .whitespaces), radix: 8)
      else { return nil }
      switch flags & O_ACCMODE {
      case O_RDONLY: return .readOnly
      case O_WRONLY: return .writeOnly
      default: return .readWrite
      }
    }
  }
}
