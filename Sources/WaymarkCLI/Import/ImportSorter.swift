import Glibc

/// Sorts an imported file's points by time in bounded memory: an external merge sort.
///
/// Points are collected in a run of at most ``runCapacity`` (48 bytes each: 1,000,000 points
/// are 48 MB); a full run is sorted and written to an unnamed temporary file (created in
/// `$TMPDIR`, else `/tmp`, and unlinked at once, so nothing is left behind), and the next run
/// begins. ``inOrder(_:)`` then merges the runs, reading each a block of ``blockPoints`` at a
/// time. A file of any size is thus sorted in the memory of one run plus a block per run;
/// a file that fits in one run is sorted in memory and never touches the disk. The order is
/// ``ImportedPoint/precedes(_:)``'s (time, then reading order), a total order: the result is
/// the same for any run size.
final class ImportSorter: @unchecked Sendable {
  // @unchecked: used by one thread at a time, the file's reader, then the output thread once
  // the reader has finished.
  /// Points in memory before a run is sorted and written out.
  let runCapacity: Int
  /// Points read from a run file at a time while merging.
  static let blockPoints = 16_384
  private var run: [ImportedPoint] = []
  private var files: [(descriptor: Int32, count: Int)] = []
  /// Points collected so far.
  private(set) var count = 0
  /// The earliest and the latest point's time, milliseconds since 1970.
  private(set) var earliest = Int64.max
  private(set) var latest = Int64.min
  /// The first failed write or read of a run file: the points are then incomplete, and the
  /// import must stop.
  private(set) var failure: ImportReadError?

  /// The default run: 1,000,000 points (48 MB); `WAYMARK_IMPORT_RUN_POINTS` sets another
  /// (tests sort a small file in several runs with it).
  static var defaultRunCapacity: Int {
    guard let text = getenv("WAYMARK_IMPORT_RUN_POINTS"), let value = Int(String(cString: text)),
      value >= 1
    else { return 1_000_000 }
    return value
  }

  init(runCapacity: Int = ImportSorter.defaultRunCapacity) {
    self.runCapacity = max(1, runCapacity)
  }

  deinit {
    for file in files { close(file.descriptor) }
  }

  /// Adds a point (none after a ``failure``).
  func append(_ point: ImportedPoint) {
    guard failure == nil else { return }
    run.append(point)
    count += 1
    earliest = min(earliest, point.milliseconds)
    latest = max(latest, point.milliseconds)
    if run.count >= runCapacity {
      do { try spill() } catch { failure = error }
    }
  }

  /// Calls `body` with every point in order (time, then reading order), until a ``failure``.
  func inOrder(_ body: (ImportedPoint) -> Void) {
    guard failure == nil else { return }
    do { try merge(body) } catch { failure = error }
  }

  private func merge(_ body: (ImportedPoint) -> Void) throws(ImportReadError) {
    run.sort { $0.precedes($1) }
    guard !files.isEmpty else {
      for point in run { body(point) }
      return
    }
    // A head per source: the run in memory (index -1) and each file.
    var blocks: [[ImportedPoint]] = []
    var positions: [Int] = []
    var offsets: [Int] = []
    for file in files {
      blocks.append(try read(file, from: 0))
      positions.append(0)
      offsets.append(blocks[blocks.count - 1].count)
    }
    var memory = 0
    while true {
      var best = -1
      var bestPoint: ImportedPoint?
      if memory < run.count { bestPoint = run[memory] }
      for source in blocks.indices where positions[source] < blocks[source].count {
        let candidate = blocks[source][positions[source]]
        if bestPoint.map({ candidate.precedes($0) }) ?? true {
          best = source
          bestPoint = candidate
        }
      }
      guard let point = bestPoint else { return }
      body(point)
      if best < 0 {
        memory += 1
        continue
      }
      positions[best] += 1
      if positions[best] == blocks[best].count, offsets[best] < files[best].count {
        blocks[best] = try read(files[best], from: offsets[best])
        offsets[best] += blocks[best].count
        positions[best] = 0
      }
    }
  }

  /// Sorts the run and writes it to a new unnamed temporary file.
  private func spill() throws(ImportReadError) {
    run.sort { $0.precedes($1) }
    let directory = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
    var template = Array("\(directory)/waymark-import-XXXXXX".utf8CString)
    let descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
    guard descriptor >= 0 else { throw ImportReadError(code: errno) }
    template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
    files.append((descriptor, run.count))
    let total = run.count * MemoryLayout<ImportedPoint>.stride
    let code = run.withUnsafeBytes { bytes -> Int32 in
      var written = 0
      while written < total {
        let result = write(descriptor, bytes.baseAddress! + written, total - written)
        if result < 0 {
          if errno == EINTR { continue }
          return errno
        }
        written += result
      }
      return 0
    }
    guard code == 0 else { throw ImportReadError(code: code) }
    run.removeAll(keepingCapacity: true)
  }

  /// Up to ``blockPoints`` points of `file` from point `offset` on.
  private func read(
    _ file: (descriptor: Int32, count: Int), from offset: Int
  ) throws(ImportReadError) -> [ImportedPoint] {
    let wanted = min(Self.blockPoints, file.count - offset)
    let stride = MemoryLayout<ImportedPoint>.stride
    var block = [ImportedPoint](
      repeating: ImportedPoint(
        milliseconds: 0, latitude: 0, longitude: 0, altitude: 0, accuracy: 0, speed: 0,
        course: 0, line: 0, sequence: 0), count: wanted)
    let code = block.withUnsafeMutableBytes { bytes -> Int32 in
      var done = 0
      while done < wanted * stride {
        let result = pread(
          file.descriptor, bytes.baseAddress! + done, wanted * stride - done,
          off_t(offset * stride + done))
        if result < 0 {
          if errno == EINTR { continue }
          return errno
        }
        if result == 0 { return EIO }
        done += result
      }
      return 0
    }
    guard code == 0 else { throw ImportReadError(code: code) }
    return block
  }
}
