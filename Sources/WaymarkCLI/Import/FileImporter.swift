import FoundationEssentials
import Glibc
import WaymarkCore
import WaymarkPipeline
import WaymarkStore

/// One file of `waymark import`: read (``GPXTrack``, ``CSVTrack``, or a JSON format through
/// ``JSONElementStream``), its points sorted by time, checked against the store's track, then
/// run through the replay's pipeline (``ReplayComposition``) as the fixes of a log read at full
/// speed: the same manager decisions, place monitor, visit recorder, stays and track.
struct FileImporter {
  /// The file's path as given.
  var path: String
  /// `--format`, or `nil` to detect it.
  var format: ImportFormat?
  /// The pipeline's options (`path` is this file).
  var options: ReplayOptions
  /// `--append`: import into a store whose track already covers part of the file's time.
  var appends: Bool

  /// Bytes looked at to detect a format.
  static let sniffBytes = 64 << 10

  /// Imports the file.
  ///
  /// - Returns: `.ok`; `.dataError` when a record was bad, nothing could be imported, or the
  ///   store's track overlaps the file (without `--append`).
  /// - Throws: ``CommandError`` (66 unreadable, 65 unknown format, 74 store or read error).
  func run() async throws -> ExitCode {
    let errors = OutputSink.standardError
    // The path as messages show it: escaped where it meets the terminal.
    let shown = LogText.escaped(path)
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else {
      throw CommandError(
        "cannot read '\(shown)': \(String(cString: strerror(errno)))", code: .noInput)
    }
    defer { close(descriptor) }
    var status = stat()
    if fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR {
      throw CommandError("cannot read '\(shown)': Is a directory", code: .noInput)
    }
    let batch = ImportBatch(path: path, errors: errors)
    let format: ImportFormat
    if let given = self.format {
      format = given
    } else {
      var head = [UInt8](repeating: 0, count: Self.sniffBytes)
      let count = head.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
      guard count >= 0 else { throw Self.readError(path, errno) }
      guard count > 0 else {
        throw CommandError("\(shown): the file is empty; nothing imported", code: .dataError)
      }
      guard let detected = ImportFormat.detect(path: path, head: Array(head[0..<count])) else {
        throw CommandError(
          "\(shown): cannot tell the format; give --format "
            + ImportFormat.allCases.map(\.rawValue).joined(separator: "|"),
          code: .dataError)
      }
      format = detected
    }
    do {
      try read(descriptor, as: format, into: batch)
    } catch {
      throw Self.readError(path, error.code)
    }
    let points = batch.points
    if let failure = points.failure { throw Self.sortError(failure) }
    var summary = "waymark import: \(shown) (\(format.rawValue))\n"
    summary += "points: \(points.count); bad records: \(batch.badCount)"
    summary += "; records without a position: \(batch.skippedCount)\n"
    guard points.count > 0 else {
      errors.write(summary)
      errors.line("Error: \(shown): no point to import")
      return .dataError
    }
    let firstDate = Timestamp.date(milliseconds: points.earliest)
    let lastDate = Timestamp.date(milliseconds: points.latest)
    guard let storePath = options.storePath else {
      throw CommandError("no store to import into", code: .software)
    }
    let database = try StorePath.open(storePath, create: true, personal: true)
    let before: (overlapping: Int, monitor: [String: MonitorStateRepository.Entry], last: Date?)
    do {
      before = try database.read { connection in
        let state = MonitorStateRepository(connection)
        return (
          try TrackRepository(connection).count(
            since: firstDate, until: lastDate.addingTimeInterval(0.001)),
          try state.all(), try state.lastFix()?.time
        )
      }
    } catch {
      throw StorePath.commandError(error)
    }
    if !appends && before.overlapping > 0 {
      errors.write(summary)
      errors.line(
        "Error: \(shown): the store already has \(before.overlapping) track "
          + "point(s) from \(Timestamp.format(firstDate)) to \(Timestamp.format(lastDate)), the "
          + "file's time; nothing imported. '--append' imports it anyway (a point at a time "
          + "already recorded is not recorded again).")
      return .dataError
    }
    var options = options
    options.path = path
    let output = OutputSink.standardOutput
    let composition = try ReplayComposition(options: options, source: path, output: output)
    let gate = FixPipeline.replaying(name: path)
    let outputs = ReplayOutputs(
      pipeline: composition.pipeline, places: composition.places, output: output,
      progress: nil, reader: nil, gate: gate, mqttWaitSeconds: options.mqttWaitSeconds)
    try LogReplayer.start(gate) { outputs.process($0) }
    defer { gate.stop() }
    try await outputs.onThread {
      points.inOrder { outputs.ingest($0.fix(path: path)) }
    }
    if let failure = points.failure { throw Self.sortError(failure) }
    if let last = before.last, last > lastDate {
      // History older than the store's own fixes: the monitor's saved state (what waymarkd
      // and the next replay resume from) stays the store's, not the end of this file.
      do {
        try database.write { connection in
          let state = MonitorStateRepository(connection)
          try state.removeAll()
          for (placeID, entry) in before.monitor.sorted(by: { $0.key < $1.key }) {
            try state.save(placeID: placeID, entry)
          }
        }
      } catch {
        throw StorePath.commandError(error)
      }
    }
    output.flush()
    summary += "time: \(Timestamp.format(firstDate)) to \(Timestamp.format(lastDate))\n"
    errors.write(summary + composition.summary)
    return batch.badCount > 0 ? .dataError : .ok
  }

  /// Reads the file's records into `batch`.
  private func read(
    _ descriptor: Int32, as format: ImportFormat, into batch: ImportBatch
  ) throws(ImportReadError) {
    switch format {
    case .gpx:
      var reader = GPXTrack()
      try ImportReadError.readChunks(descriptor) { reader.add($0, to: batch) }
      reader.finish(to: batch)
      return
    case .csv:
      var reader = CSVTrack()
      try ImportReadError.readChunks(descriptor) { reader.add($0, to: batch) }
      if !reader.finish(to: batch) {
        batch.bad(line: 1, "header", "no time, latitude or longitude column")
      }
      return
    default:
      break
    }
    var stream = JSONElementStream(descriptor: descriptor)
    let ending = try stream.read(
      { element in
        if format == .geojson {
          GeoJSONTrack.add(element, to: batch)
        } else {
          TakeoutRecord.add(element, to: batch)
        }
      },
      unreadable: { path, line, reason in batch.bad(line: line, path, reason) })
    switch ending {
    case .complete: break
    case .empty: batch.bad(line: 1, "", "no JSON value (an empty file)")
    case .truncated(let line):
      batch.bad(line: line, "", "the JSON ends here, inside a value (a truncated file?)")
    }
  }

  /// A failed read of `path` (exit 74).
  private static func readError(_ path: String, _ code: Int32) -> CommandError {
    CommandError(
      "cannot read '\(LogText.escaped(path))': \(String(cString: strerror(code)))", code: .ioError)
  }

  /// A failed write or read of a sort run in the temporary directory (exit 74).
  private static func sortError(_ error: ImportReadError) -> CommandError {
    CommandError(
      "cannot sort the points in the temporary directory ($TMPDIR or /tmp): "
        + String(cString: strerror(error.code)), code: .ioError)
  }
}
