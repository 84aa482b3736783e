import NMEA
import WaymarkCore
import WaymarkPipeline

/// The replay's output thread: the ``WaymarkPipeline`` with the replay's sinks, then its end
/// (the monitor's state saved, the last stays) and the MQTT back-fill.
final class ReplayOutputs: @unchecked Sendable {
  // @unchecked: everything here is used by the output thread alone, and read by the replay's
  // task only after that thread has finished.
  private let pipeline: WaymarkPipeline
  private let places: ReplayPlaceSession?
  private let output: OutputSink
  private let progress: ReplayProgress?
  /// The NMEA log read here, `nil` for an import (its fixes come through ``ingest(_:)``).
  private let reader: NMEALogReader?
  /// The manager the fixes read here go through (a replay with places at full speed), or
  /// `nil` (they go to the pipeline directly).
  private let inline: FixPipeline?
  /// Whether the replay is paced: then the output is flushed whenever the thread waits.
  private let paced: Bool
  private let mqttWaitSeconds: Double
  private var handled = 0
  private var failure: (any Error)?
  /// Whether every MQTT message was acknowledged (`true` without `--mqtt`).
  private(set) var published = true

  init(
    pipeline: WaymarkPipeline, places: ReplayPlaceSession?, output: OutputSink,
    progress: ReplayProgress?, reader: NMEALogReader?, paced: Bool, mqttWaitSeconds: Double,
    inline: FixPipeline? = nil
  ) {
    self.pipeline = pipeline
    self.places = places
    self.output = output
    self.progress = progress
    self.reader = reader
    self.paced = paced
    self.mqttWaitSeconds = mqttWaitSeconds
    self.inline = inline
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

  /// Reads the log here and gives each fix to the pipeline, through the inline manager when
  /// there is one (any replay at full speed).
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
  /// inline manager when there is one (any replay at full speed), until the end of the log or
  /// the first failure.
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

  /// Takes the fixes the manager hands over until the end of the log (`false` from `wakes`).
  func take(from inbox: PipelineInbox, wakes: Channel<Bool>) {
    var more = true
    while more {
      more = wakes.receive() ?? false
      for fix in inbox.receiveAll() where failure == nil { process(fix) }
      if failure != nil {
        // The source reads no more: its next admission fails and the log ends.
        inbox.close()
        return
      }
      if paced { output.flush() }
    }
  }

  /// Gives one fix read on this thread (an import's) to the pipeline, as a fix of the log:
  /// through the inline manager when there is one. Until the first failure.
  func ingest(_ fix: consuming Fix) {
    if failure == nil { accept(fix) }
  }

  /// A fix read on this thread: through the inline manager (whose output is ``process(_:)``,
  /// called before `ingest` returns), or straight to the pipeline.
  private func accept(_ fix: consuming Fix) {
    if let inline { inline.ingest(fix) } else { process(fix) }
  }

  /// Runs `fix` through the pipeline (the inline manager's output, or a fix read here, moved
  /// to the pipeline without a copy).
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
