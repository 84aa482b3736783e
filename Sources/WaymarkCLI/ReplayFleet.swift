import NMEA
import WaymarkCore

/// `waymark replay a.nmea b.nmea … --jobs N`: several logs (a fleet, one device each) replayed
/// as if one after another, in the order given.
///
/// `N` worker threads read and decode the logs ahead, each log into its own bounded
/// ``NMEAReadAhead`` (a worker takes the next log in order when it has filled one) and, at full
/// speed with a place side, through the log's own location manager (``ReplayManagerStage``:
/// what depends on the log alone), while the logs go through the pipeline, with the store as its
/// one writer, strictly in the given order, each with its own pipeline (monitor, stays, sinks)
/// as a replay of it alone. The store keeps one device's history (a log resumes the state the
/// logs before it left), so the order is part of the result; in that order, the store and the
/// output are the same, byte for byte, whatever `N` is and whichever worker ends first. A log that fails (unreadable, a bad line under `--strict`, a read error) is reported
/// with its name (and line) and the replay goes on with the next; the exit code is the first
/// failure's.
struct ReplayFleet {
  /// The logs' paths, in replay order.
  var paths: [String]
  /// Each log's device (``ReplayDevices``), in the order of ``paths``.
  var devices: [String]
  /// Decoding threads (at least 1).
  var jobs: Int
  /// The options every log is replayed with (`path` is replaced per log).
  var options: ReplayOptions

  /// Batches (chunks of a log) a worker decodes ahead before it waits for the pipeline.
  static let readAheadBatches = 16

  /// Replays every log in order.
  ///
  /// - Returns: `.ok`, or the exit code of the first log that failed.
  func run() async -> ExitCode {
    let readAheads = paths.map { _ in NMEAReadAhead(capacity: Self.readAheadBatches) }
    var logs: [Result<ReplayLog, CommandError>] = []
    for (path, readAhead) in zip(paths, readAheads) {
      do {
        logs.append(
          .success(
            try ReplayLog(
              path: path, defaultDate: options.defaultDate, strict: options.strict,
              readAhead: readAhead, managed: options.runsManagerInline)))
      } catch {
        readAhead.cancel()
        logs.append(.failure(error as? CommandError ?? CommandError("\(error)", code: .failure)))
      }
    }
    let opened = logs.map { try? $0.get() }
    let next = Locked(0)
    for worker in 0..<min(jobs, paths.count) {
      DetachedThread.start(name: "replay-job-\(worker)") {
        while true {
          let index = next.withLock { index -> Int in
            defer { index += 1 }
            return index
          }
          guard index < readAheads.count else { return }
          guard let log = opened[index] else { continue }
          if let stage = log.managerStage {
            readAheads[index].fill(from: log.reader) { stage.pass($0) }
            stage.stop()
          } else {
            readAheads[index].fill(from: log.reader)
          }
        }
      }
    }
    var exit = ExitCode.ok
    for (index, log) in logs.enumerated() {
      let code: ExitCode
      do {
        var options = options
        options.path = paths[index]
        options.device = devices[index]
        code = try await LogReplayer(options: options, log: try log.get()).run()
      } catch let error as CommandError {
        OutputSink.standardOutput.flush()
        OutputSink.standardError.write("Error: \(error.message)\n")
        code = error.code
      } catch {
        OutputSink.standardOutput.flush()
        OutputSink.standardError.write("Error: \(error)\n")
        code = .failure
      }
      readAheads[index].cancel()
      if exit == .ok { exit = code }
    }
    return exit
  }
}
