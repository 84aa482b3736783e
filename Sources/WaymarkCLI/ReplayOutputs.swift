import NMEA
import WaymarkCore
import WaymarkPipeline

/// The replay's output thread, the one way a replayed or imported fix enters the pipeline:
/// read here (or taken from a fleet worker's decoded batches, or handed over by an import),
/// paced on the injected clock at a `--speed` factor (``ReplayPacer``), through the replay's
/// location manager, its authorization gate (``FixPipeline/ingest(_:)``, whose output is
/// ``process(_:)``, called before `ingest` returns), then the ``WaymarkPipeline`` with the
/// replay's sinks; at the end, the pipeline's end (the monitor's state saved, the last stays)
/// and the MQTT back-fill. One thread, no hand-off.
final class ReplayOutputs: @unchecked Sendable {
  // @unchecked: everything here is used by the output thread alone, and read by the replay's
  // task only after that thread has finished.
  private let pipeline: WaymarkPipeline
  private let places: ReplayPlaceSession?
  private let output: OutputSink
  private let progress: ReplayProgress?
  /// The NMEA log read here, `nil` for an import (its fixes come through ``ingest(_:)``).
  private let reader: NMEALogReader?
  /// The location manager every fix goes through before the pipeline.
  private let gate: FixPipeline
  /// The waits of a paced replay, `nil` at full speed; the output is flushed before each.
  private var pacer: ReplayPacer?
  /// Whether ``pacer`` is set (read once a fix without touching the optional struct).
  private let paced: Bool
  private let mqttWaitSeconds: Double
  private var handled = 0
  private var failure: (any Error)?
  /// Whether every MQTT message was acknowledged (`true` without `--mqtt`).
  private(set) var published = true

  init(
    pipeline: WaymarkPipeline, places: ReplayPlaceSession?, output: OutputSink,
    progress: ReplayProgress?, reader: NMEALogReader?, gate: FixPipeline,
    pacer: ReplayPacer? = nil, mqttWaitSeconds: Double
  ) {
    self.pipeline = pipeline
    self.places = places
    self.output = output
    self.progress = progress
    self.reader = reader
    self.gate = gate
    self.pacer = pacer
    paced = pacer != nil
    self.mqttWaitSeconds = mqttWaitSeconds
  }

  /// Runs `body` on a thread of its own, then the pipeline's end and the MQTT back-fill there;
  /// returns when they are done.
  ///
  /// - Throws: the first error of the pipeline (as a ``CommandError``).
  func onThread(_ body: @escaping @Sendable () -> Void) async throws {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      DetachedThread.start(name: "replay-outputs") {
        body()
        self.end()
        continuation.resume()
      }
    }
    if let failure { throw failure }
  }

  /// Reads the log here and gives each fix to the pipeline, through the manager.
  func readDirectly() {
    guard let reader else { return }
    do {
      while try reader.readChunk({ accept($0) }), failure == nil {
        let read = reader.progress
        progress?.update(bytes: read.bytes, epochs: read.epochs, events: nil)
      }
    } catch let error as NMEALogReader.ReadError {
      failure = failure ?? ReplayLog.commandError(error)
    } catch {
      failure = failure ?? error
    }
  }

  /// Takes the batches a fleet worker decoded and gives each fix to the pipeline, through the
  /// manager, until the end of the log or the first failure.
  func take(from readAhead: NMEAReadAhead) {
    while failure == nil, let batch = readAhead.nextBlocking() {
      for fix in batch where failure == nil { accept(fix) }
      if let read = reader?.progress {
        progress?.update(bytes: read.bytes, epochs: read.epochs, events: nil)
      }
    }
    readAhead.cancel()
    if failure == nil, let error = readAhead.failure {
      failure = ReplayLog.commandError(error)
    }
  }

  /// Gives one fix read on this thread (an import's) to the pipeline, as a fix of the log:
  /// through the manager. Until the first failure.
  func ingest(_ fix: Fix) {
    if failure == nil { accept(fix) }
  }

  /// A fix read on this thread: paced, then through the manager (whose output is
  /// ``process(_:)``, called before `ingest` returns).
  private func accept(_ fix: Fix) {
    if paced, let delay = pacer?.delay(before: fix) {
      output.flush()
      pacer?.sleep(for: delay)
    }
    gate.ingest(fix)
  }

  /// Runs `fix` through the pipeline (the manager's output, on this thread).
  func process(_ fix: consuming Fix) {
    guard failure == nil else { return }
    do {
      try pipeline.process(fix)
    } catch {
      failure = StorePath.commandError(error)
    }
    handled += 1
    if handled % 4096 == 0, let progress, let read = reader?.progress {
      progress.update(bytes: read.bytes, epochs: read.epochs, events: places?.eventCount)
    }
  }

  /// The end of the log: the pipeline's end, then the MQTT back-fill.
  private func end() {
    guard failure == nil else { return }
    do {
      try pipeline.finish()
    } catch {
      failure = StorePath.commandError(error)
      return
    }
    published = places?.publish(waitSeconds: mqttWaitSeconds) ?? true
  }
}
