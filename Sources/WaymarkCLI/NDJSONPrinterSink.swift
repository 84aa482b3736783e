import Waymark
import WaymarkCore
import WaymarkPipeline

/// `waymark replay`'s standard output: per fix, its gpsd-style TPV object (`--fixes`), the place
/// events it caused (`--places`, `--store`) and the stays it closed (`--visits`, as VISIT
/// objects); at the end of the log, the stay its end closed and the one still open.
final class NDJSONPrinterSink: PipelineSink {
  private let output: OutputSink
  private let printsFixes: Bool
  private let printsEvents: Bool
  /// The declared places that name a stay; `nil` when stays are not printed.
  private let stayPlaces: [Place]?
  private let source: String
  /// VISIT objects printed so far.
  private(set) var stayCount = 0

  init(
    output: OutputSink, printsFixes: Bool, printsEvents: Bool, stayPlaces: [Place]?,
    source: String
  ) {
    self.output = output
    self.printsFixes = printsFixes
    self.printsEvents = printsEvents
    self.stayPlaces = stayPlaces
    self.source = source
  }

  func receive(_ step: PipelineStep) throws {
    output.withBuffer { buffer in
      if printsFixes { step.fix.appendTPV(to: &buffer) }
      guard printsEvents else { return }
      for outcome in step.places {
        outcome.event.jsonLine().write(to: &buffer)
        // The replay stops at an event it could not record (the session throws): later events
        // of the fix are not printed.
        if outcome.failure != nil { return }
      }
    }
    if let failure = step.stayFailure { throw StorePath.commandError(failure) }
    guard stayPlaces != nil else { return }
    output.withBuffer { buffer in
      for case .departure(let stay) in step.stays { write(stay, to: &buffer) }
    }
  }

  func finish(closed: [StayDetector.Event], open: Stay?) throws {
    guard stayPlaces != nil else { return }
    output.withBuffer { buffer in
      for case .departure(let stay) in closed { write(stay, to: &buffer) }
      if let open { write(open, to: &buffer) }
    }
  }

  private func write(_ stay: Stay, to output: inout [UInt8]) {
    var stay = stay
    let place = stay.place(in: stayPlaces ?? [])
    stay.placeID = place?.id
    VisitsCommand.stayLine(stay, place: place.map(PlaceSnapshot.init), source: source)
      .write(to: &output)
    stayCount += 1
  }
}
