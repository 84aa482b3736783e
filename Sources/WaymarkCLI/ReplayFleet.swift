import NMEA
import WaymarkCore
import WaymarkStore

/// `waymark replay a.nmea b.nmea … --jobs N`: several logs (a fleet, each log a device's)
/// replayed as if one after another, in the order given.
///
/// `N` worker threads read and decode the logs ahead, each log into its own bounded
/// ``NMEAReadAhead`` (a worker takes the next log in order when it has filled one). Each log
/// then goes through a pipeline of its own (its location manager, monitor, stays, sinks) as a
/// replay of it alone, with the store as its one writer. The store keeps
/// each device's history apart (``ReplayDevices``), so one device's logs go through in the
/// given order, one after another (a log resumes the state its device's logs before it left),
/// while with `N` > 1 and several devices up to `N` devices' logs go through at once: their
/// pipelines share nothing but the store's writer, and each log's output is held
/// (``ReplaySpool``) and printed in the given order. Either way the store and the output are
/// those of replaying the logs one by one. With `--mqtt` the logs go one at a time (the
/// outbox is one queue). A log that fails (unreadable, a bad line under `--strict`, a read
/// error) is reported with its name (and line) and the replay goes on with the next; the exit
/// code is the first failure's, in the given order.
struct ReplayFleet {
  /// The logs' paths, in replay order.
  var paths: [String]
  /// Each log's device (``ReplayDevices``), in the order of ``paths``.
  var devices: [String]
  /// Decoding threads, and devices replayed at once (at least 1).
  var jobs: Int
  /// The options every log is replayed with (`path` and `device` are replaced per log).
  var options: ReplayOptions

  /// Batches (chunks of a log) a worker decodes ahead before it waits for the pipeline.
  static let readAheadBatches = 16

  /// The logs' indices by device, devices in the order of their first log.
  static func groups(_ devices: [String]) -> [[Int]] {
    var order: [String] = []
    var indices: [String: [Int]] = [:]
    for (index, device) in devices.enumerated() {
      if indices[device] == nil { order.append(device) }
      indices[device, default: []].append(index)
    }
    return order.map { indices[$0] ?? [] }
  }

  /// Replays every log.
  ///
  /// - Returns: `.ok`, or the exit code of the first log (in the given order) that failed.
  func run() async -> ExitCode {
    let readAheads = paths.map { _ in NMEAReadAhead(capacity: Self.readAheadBatches) }
    var logs: [Result<ReplayLog, CommandError>] = []
    for (path, readAhead) in zip(paths, readAheads) {
      do {
        logs.append(
          .success(
            try ReplayLog(
              path: path, defaultDate: options.defaultDate, strict: options.strict,
              readAhead: readAhead)))
      } catch {
        readAhead.cancel()
        logs.append(.failure(error as? CommandError ?? CommandError("\(error)", code: .failure)))
      }
    }
    startWorkers(logs.map { try? $0.get() }, readAheads: readAheads)
    let groups = Self.groups(devices)
    guard jobs > 1, groups.count > 1, options.mqtt == nil else {
      var exit = ExitCode.ok
      for index in logs.indices {
        let code = await replay(index, logs[index], readAheads[index], options: options)
        if exit == .ok { exit = code }
      }
      return exit
    }
    return await replayInParallel(groups, logs: logs, readAheads: readAheads)
  }

  /// Starts the decoding workers: each takes the next log in the given order.
  private func startWorkers(_ opened: [ReplayLog?], readAheads: [NMEAReadAhead]) {
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
          readAheads[index].fill(from: log.reader)
        }
      }
    }
  }

  /// Up to ``jobs`` devices at once, each device's logs in order, every log's output spooled
  /// and printed in the given order at the end; the store opened once, for its one writer.
  private func replayInParallel(
    _ groups: [[Int]], logs: [Result<ReplayLog, CommandError>], readAheads: [NMEAReadAhead]
  ) async -> ExitCode {
    var options = options
    if let storePath = options.storePath {
      do {
        options.store = try StorePath.open(storePath, create: true, personal: true)
      } catch {
        for readAhead in readAheads { readAhead.cancel() }
        OutputSink.standardError.write("Error: \(error.message)\n")
        return error.code
      }
    }
    var spools: [ReplaySpool?] = []
    for _ in logs.indices {
      guard let spool = ReplaySpool() else {
        for readAhead in readAheads { readAhead.cancel() }
        OutputSink.standardError.write("Error: cannot create a temporary file for the output\n")
        return .ioError
      }
      spools.append(spool)
    }
    let run = Run(
      fleet: self, options: options, logs: logs, readAheads: readAheads, spools: spools)
    var codes = [ExitCode](repeating: .ok, count: logs.count)
    await withTaskGroup(of: [(Int, ExitCode)].self) { group in
      var pending = groups[...]
      func startNext() {
        guard let indices = pending.popFirst() else { return }
        group.addTask {
          var done: [(Int, ExitCode)] = []
          for index in indices { done.append((index, await run.replay(index))) }
          return done
        }
      }
      for _ in 0..<min(jobs, groups.count) { startNext() }
      while let done = await group.next() {
        for (index, code) in done { codes[index] = code }
        startNext()
      }
    }
    for spool in spools {
      spool?.release(output: OutputSink.standardOutput, errors: OutputSink.standardError)
    }
    return codes.first { $0 != .ok } ?? .ok
  }

  /// What the tasks of a parallel replay share.
  private final class Run: @unchecked Sendable {
    // @unchecked: each log's entries (its log, read-ahead and spool) are used by the one task
    // that replays its device; the rest is read only.
    let fleet: ReplayFleet
    let options: ReplayOptions
    let logs: [Result<ReplayLog, CommandError>]
    let readAheads: [NMEAReadAhead]
    let spools: [ReplaySpool?]

    init(
      fleet: ReplayFleet, options: ReplayOptions, logs: [Result<ReplayLog, CommandError>],
      readAheads: [NMEAReadAhead], spools: [ReplaySpool?]
    ) {
      self.fleet = fleet
      self.options = options
      self.logs = logs
      self.readAheads = readAheads
      self.spools = spools
    }

    func replay(_ index: Int) async -> ExitCode {
      await fleet.replay(
        index, logs[index], readAheads[index], options: options, spool: spools[index])
    }
  }

  /// Replays log `index`, reporting its failure on `spool`'s standard error (or the process's).
  private func replay(
    _ index: Int, _ log: Result<ReplayLog, CommandError>, _ readAhead: NMEAReadAhead,
    options: ReplayOptions, spool: ReplaySpool? = nil
  ) async -> ExitCode {
    let output = spool?.output ?? OutputSink.standardOutput
    let errors = spool?.errors ?? OutputSink.standardError
    let code: ExitCode
    do {
      var options = options
      options.path = paths[index]
      options.device = devices[index]
      code = try await LogReplayer(options: options, log: try log.get(), spool: spool).run()
    } catch let error as CommandError {
      output.flush()
      errors.write("Error: \(error.message)\n")
      code = error.code
    } catch {
      output.flush()
      errors.write("Error: \(error)\n")
      code = .failure
    }
    readAhead.cancel()
    return code
  }
}
