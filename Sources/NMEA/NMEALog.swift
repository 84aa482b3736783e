import FoundationEssentials
import Glibc
import WaymarkCore

/// The result of decoding a whole log.
public struct NMEADecoding: Sendable {
  /// One fix per epoch, in log order.
  public var fixes: [Fix]
  /// What was read.
  public var statistics: NMEAStatistics
}

/// Whole-log convenience over ``NMEADecoder``.
public enum NMEALog {
  /// Decodes a complete log held in memory.
  public static func decode(
    _ bytes: [UInt8], path: String, defaultDate: UTCDate? = nil
  ) -> NMEADecoding {
    var decoder = NMEADecoder(path: path, defaultDate: defaultDate)
    var fixes: [Fix] = []
    _ = bytes.withUnsafeBytes { raw in
      decoder.decode(chunk: raw) { fixes.append($0) }
    }
    decoder.finish { fixes.append($0) }
    return NMEADecoding(fixes: fixes, statistics: decoder.statistics)
  }

  /// Reads a whole file as bytes.
  ///
  /// - Throws: ``NMEALogError/unreadable(path:reason:)``.
  public static func readFile(atPath path: String) throws -> [UInt8] {
    let descriptor = open(path, O_RDONLY)
    guard descriptor >= 0 else {
      throw NMEALogError.unreadable(path: path, reason: String(cString: strerror(errno)))
    }
    defer { close(descriptor) }
    var status = stat()
    guard fstat(descriptor, &status) == 0 else {
      throw NMEALogError.unreadable(path: path, reason: String(cString: strerror(errno)))
    }
    if (status.st_mode & S_IFMT) == S_IFDIR {
      throw NMEALogError.unreadable(path: path, reason: "Is a directory")
    }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(max(0, Int(status.st_size)))
    var chunk = [UInt8](repeating: 0, count: 1 << 20)
    while true {
      let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
      if count < 0 {
        if errno == EINTR { continue }
        throw NMEALogError.unreadable(path: path, reason: String(cString: strerror(errno)))
      }
      if count == 0 { break }
      bytes.append(contentsOf: chunk[0..<count])
    }
    return bytes
  }
}

/// Errors reading a log.
public enum NMEALogError: Error, Sendable, Equatable, CustomStringConvertible {
  /// The file could not be opened or read.
  case unreadable(path: String, reason: String)

  public var description: String {
    switch self {
    case .unreadable(let path, let reason): "cannot read '\(path)': \(reason)"
    }
  }
}
