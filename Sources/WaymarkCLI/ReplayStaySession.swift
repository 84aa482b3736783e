import Waymark
import WaymarkCore
import WaymarkService
import WaymarkStore

/// The stay side of `waymark replay --visits`: the ``StayDetector`` fed with every fix, each
/// stay printed as a VISIT object when it closes, and the open one at the end of the log; with
/// `--store`, the same ``StayRecorder`` as `waymarkd` records them (written on arrival and
/// departure; replaying the log again finds their rows).
///
/// A stay whose centre lies in a declared place (`--places`, or the store's) names it.
final class ReplayStaySession {
  private var detector: StayDetector
  private let recorder: StayRecorder?
  private let places: [Place]
  private let source: String
  /// Stays printed so far.
  private(set) var count = 0

  init(
    places: [Place], source: String, configuration: StayDetector.Configuration,
    database: Database?
  ) throws {
    detector = StayDetector(configuration: configuration)
    if let database {
      do {
        recorder = try StayRecorder(
          database: database, places: places, configuration: configuration, source: source,
          resumes: false, saveIntervalSeconds: .infinity)
      } catch {
        throw StorePath.commandError(error)
      }
    } else {
      recorder = nil
    }
    self.places = places
    self.source = source
  }

  /// Feeds one fix; appends the stays it closed as VISIT lines to `output`.
  func process(_ fix: Fix, output: inout [UInt8]) throws {
    let events: [StayDetector.Event]
    if let recorder {
      do { events = try recorder.process(fix) } catch { throw StorePath.commandError(error) }
    } else {
      guard let location = Location(fix) else { return }
      events = detector.process(location)
    }
    for case .departure(let stay) in events { write(stay, to: &output) }
  }

  /// Ends the log: appends the stay it closed, then the open one.
  func finish(output: inout [UInt8]) throws {
    if let recorder {
      do {
        for case .departure(let stay) in try recorder.finish() { write(stay, to: &output) }
      } catch {
        throw StorePath.commandError(error)
      }
      if let open = recorder.openStay { write(open, to: &output) }
      return
    }
    for case .departure(let stay) in detector.finish() { write(stay, to: &output) }
    if let open = detector.openStay { write(open, to: &output) }
  }

  private func write(_ stay: Stay, to output: inout [UInt8]) {
    var stay = stay
    let place = stay.place(in: places)
    stay.placeID = place?.id
    VisitsCommand.stayLine(stay, place: place.map(PlaceSnapshot.init), source: source)
      .write(to: &output)
    count += 1
  }

  /// One line for the replay summary.
  var summary: String {
    var text = "visits: \(count)"
    if let recorder { text += "; store: \(recorder.inserted) new stay(s)" }
    return text + "\n"
  }
}
