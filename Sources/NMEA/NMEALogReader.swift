import Glibc
import WaymarkCore

/// Reads an NMEA log from a file descriptor chunk by chunk through one ``NMEADecoder``: the
/// reading half of ``NMEAReplay``, and of `waymark replay`.
///
/// Not thread-safe: one thread reads (``readChunk(_:)``). Another may watch ``progress`` while
/// it does; everything else is read after the last ``readChunk(_:)`` (for instance after the
/// ``NMEAReadAhead`` it fills has ended, which orders the two).
public final class NMEALogReader: @unchecked Sendable {
  // @unchecked: the decoder and the counters are used by one thread at a time (see above);
  // `progressState` is locked.

  /// A failed `read(2)`.
  public struct ReadError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The log's path as given to the reader.
    public var path: String
    /// The `errno` of the failed read.
    public var code: Int32

    /// "error reading '<path>': <strerror>".
    public var description: String {
      "error reading '\(path)': \(String(cString: strerror(code)))"
    }
  }

  /// How far the reader got: bytes read and epochs decoded so far.
  public struct Progress: Sendable, Hashable {
    /// Bytes of the log read so far.
    public var bytes = 0
    /// Epochs (fixes) decoded so far.
    public var epochs = 0
  }

  /// The log's path (for provenance and messages).
  public let path: String
  private let descriptor: Int32
  private let strict: Bool
  private var decoder: NMEADecoder
  private var chunk: [UInt8]
  private var ended = false
  private let progressState = Locked(Progress())
  /// Bytes read so far.
  public private(set) var bytesRead = 0
  /// The bad line that stopped a strict reader, `nil` otherwise.
  public private(set) var badLine: NMEADecoder.BadLine?

  /// A reader of the log open on `descriptor` (which the caller closes).
  ///
  /// - Parameters:
  ///   - descriptor: an open, readable file descriptor.
  ///   - path: the log's path, recorded in each fix's provenance.
  ///   - defaultDate: the UTC date of a log without RMC/ZDA dates.
  ///   - strict: stop at the first bad line (``badLine`` says which).
  ///   - chunkBytes: bytes read per `read(2)` (1 MiB by default).
  public init(
    descriptor: Int32, path: String, defaultDate: UTCDate? = nil, strict: Bool = false,
    chunkBytes: Int = 1 << 20
  ) {
    self.descriptor = descriptor
    self.path = path
    self.strict = strict
    decoder = NMEADecoder(path: path, defaultDate: defaultDate)
    chunk = [UInt8](repeating: 0, count: max(1, chunkBytes))
  }

  /// The decoder's counts (lines, sentences by type, bad lines by kind, epochs).
  public var statistics: NMEAStatistics { decoder.statistics }

  /// Epochs decoded so far.
  public var epochs: Int { decoder.statistics.epochs }

  /// Bytes read and epochs decoded so far; safe to read from any thread.
  public var progress: Progress { progressState.withLock { $0 } }

  /// Reads and decodes the next chunk, handing each finished fix to `body` (moved to it, not
  /// copied: a pipeline can keep it without a copy).
  ///
  /// - Returns: `false` at the end of the log or after a bad line of a strict reader (the last
  ///   fixes, if any, were handed over).
  /// - Throws: ``ReadError`` when `read(2)` fails (other than `EINTR`).
  public func readChunk(_ body: (consuming Fix) -> Void) throws -> Bool {
    guard !ended else { return false }
    while true {
      let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
      if count < 0 {
        let code = errno
        if code == EINTR { continue }
        ended = true
        throw ReadError(path: path, code: code)
      }
      if count == 0 {
        badLine = decoder.finish(stopOnBadLine: strict, emit: body)
        ended = true
      } else {
        bytesRead += count
        badLine = chunk.withUnsafeBytes { raw in
          decoder.decode(
            chunk: UnsafeRawBufferPointer(rebasing: raw[0..<count]), stopOnBadLine: strict,
            emit: body)
        }
        ended = badLine != nil
      }
      let progress = Progress(bytes: bytesRead, epochs: decoder.statistics.epochs)
      progressState.withLock { $0 = progress }
      return !ended
    }
  }
}
