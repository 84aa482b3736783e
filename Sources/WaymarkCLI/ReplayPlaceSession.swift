import FoundationEssentials
import Glibc
import Waymark
import WaymarkCore
import WaymarkMQTT
import WaymarkPipeline
import WaymarkStore

/// The place side of `waymark replay --places/--store/--mqtt`: the same ``VisitTracker`` as
/// `waymarkd` (monitor, recorder, saved state, one resume policy) for the pipeline, and the
/// replay's sinks for it: the MQTT outbox (``OutboxSink``), this session (it counts the events
/// and stops the replay at one it could not record) and, with a store, the same
/// ``TrackRecorder`` as the daemon (``TrackSink``: the same thinning rule).
final class ReplayPlaceSession: PipelineSink {
  /// The monitor and recorder the pipeline feeds.
  let tracker: VisitTracker
  private let track: TrackRecorder?
  private let trackSink: TrackSink?
  /// The MQTT outbox (`--mqtt`), `nil` without it.
  private let outbox: OutboxSink?
  private let hasStore: Bool
  private let database: Database?
  private let mqtt: MQTTSettings?
  private var temporaryStore: String?
  /// Transitions queued for MQTT.
  private var queuedTransitions = 0
  private(set) var arrivals = 0
  private(set) var departures = 0
  private(set) var newTransitions = 0
  /// The places monitored (from the file and the store).
  let places: [Place]

  /// The store the replay records into (`--store`), `nil` without one.
  var store: Database? { hasStore ? database : nil }

  /// The sinks of the place side, in the pipeline's order.
  var sinks: [any PipelineSink] {
    var sinks: [any PipelineSink] = []
    if let outbox { sinks.append(outbox) }
    sinks.append(self)
    if let trackSink { sinks.append(trackSink) }
    return sinks
  }

  /// Loads the places (from the file, and/or the store) and opens the store; the sinks share
  /// `context` (the track is set there). Visits, events, the monitor's state and the track are
  /// recorded as `device`'s; `openedStore` is the store at `storePath` when it is open already.
  init(
    placesPath: String?, storePath: String?, source: String,
    device: String = StoreDevice.local, openedStore: Database? = nil, mqtt: MQTTSettings? = nil,
    context: PipelineContext
  ) throws {
    var places: [Place] = []
    if let placesPath {
      guard let data = FileManager.default.contents(atPath: placesPath) else {
        throw CommandError("cannot read '\(placesPath)'", code: .noInput)
      }
      do {
        places = try PlaceCollection.decode(data)
      } catch {
        throw CommandError("\(placesPath): \(error)", code: .dataError)
      }
    }
    var database: Database?
    var storePath = storePath
    if mqtt != nil && storePath == nil {
      // The outbox needs a store: a temporary one, removed when everything is acknowledged.
      let directory = FileManager.default.temporaryDirectory.path
      storePath = PathText.join(
        directory, "waymark-replay-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).db")
      temporaryStore = storePath
    }
    if let storePath {
      let opened = try openedStore ?? StorePath.open(storePath, create: true, personal: true)
      do {
        if !places.isEmpty {
          try opened.write { _ = try PlaceRepository($0).upsert(places) }
        }
        places = try opened.read { try PlaceRepository($0).all() }
      } catch {
        throw StorePath.commandError(error)
      }
      database = opened
    }
    if places.isEmpty && mqtt == nil && database == nil {
      throw CommandError(
        "no places to monitor: give --places <geojson>, or a --store that has places",
        code: .dataError)
    }
    self.places = places
    do {
      tracker = try VisitTracker(
        places: places, database: database, source: source, device: device)
    } catch {
      throw StorePath.commandError(error)
    }
    hasStore = database != nil && temporaryStore == nil
    if let database, hasStore {
      do {
        track = try TrackRecorder(database: database, settings: Self.track, device: device)
      } catch {
        throw StorePath.commandError(error)
      }
    } else {
      track = nil
    }
    context.track = track
    trackSink = track.map { _ in TrackSink(context: context) }
    self.database = database
    self.mqtt = mqtt
    outbox = mqtt.flatMap { settings in
      database.map {
        OutboxSink(
          settings: settings, database: $0, batchSize: 1000,
          placeCreated: placeCreationTimes(places), context: context)
      }
    }
  }

  /// The daemon's thinning rule (the defaults), in large batches and without retention: the log
  /// is still there if the replay stops, and deleting old points is the daemon's business.
  static let track = TrackRecorder.Settings(
    batchPoints: 10_000, batchSeconds: .infinity, retentionDays: 0)

  /// Counts the events of a fix; stops the replay at one that could not be recorded.
  func receive(_ step: PipelineStep) throws {
    for outcome in step.places {
      if mqtt != nil && outcome.isNew { queuedTransitions += 1 }
      switch outcome.event {
      case .arrival: arrivals += 1
      case .departure: departures += 1
      }
      if let failure = outcome.failure { throw StorePath.commandError(failure) }
      if hasStore && outcome.isNew { newTransitions += 1 }
    }
  }

  /// Publishes the outbox to the MQTT broker and waits (`waitSeconds` at most) until it is empty.
  ///
  /// - Returns: whether every message was acknowledged (`true` without `--mqtt`).
  func publish(waitSeconds: Double) -> Bool {
    guard let mqtt, let database else { return true }
    let publisher = MQTTPublisher(
      settings: mqtt, database: database,
      log: { severity, message in
        if severity != .info { OutputSink.standardError.line("waymark replay: \(message)") }
      })
    do {
      try publisher.start()
    } catch {
      OutputSink.standardError.line("waymark replay: \(error)")
      return false
    }
    let drained = publisher.waitUntilEmpty(
      timeout: .milliseconds(Int64(saturating: waitSeconds * 1000)))
    publisher.stop()
    let left = (try? database.read { try OutboxRepository($0).count() }) ?? -1
    if publisher.wasTakenOver {
      // Another client with our id took the session: what it did with ours is unknown.
      OutputSink.standardError.line(
        "waymark replay: another client is using MQTT client id '\(mqtt.clientID)'; "
          + "\(left) message(s) not acknowledged; they stay in the outbox of "
          + "\(temporaryStore ?? "the store")")
      return false
    }
    if drained, let temporaryStore {
      for suffix in ["", "-wal", "-shm"] { unlink(temporaryStore + suffix) }
    } else if !drained {
      OutputSink.standardError.line(
        "waymark replay: \(left) message(s) not acknowledged by \(mqtt.endpoint); "
          + "they stay in the outbox of \(temporaryStore ?? "the store")")
    }
    return drained
  }

  /// Events so far.
  var eventCount: Int { arrivals + departures }

  /// One line for the replay summary.
  var summary: String {
    var text = "events: \(arrivals + departures) (arrivals \(arrivals), departures \(departures))"
    if mqtt != nil {
      let queued = queuedTransitions + (outbox?.queuedCount ?? 0)
      text += "; MQTT: \(queued) message(s) queued"
    }
    if hasStore {
      text += "; store: \(newTransitions) new transitions"
      if tracker.resumed { text += ", resumed from the saved state" }
      if let track { text += "; track: \(track.inserted) new point(s) of \(track.kept) kept" }
    }
    return text + "\n"
  }
}
