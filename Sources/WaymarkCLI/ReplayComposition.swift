import Waymark
import WaymarkCore
import WaymarkPipeline

/// The pipeline of one replayed log or imported file, composed once for `waymark replay` and
/// `waymark import`: the place side (``ReplayPlaceSession``: monitor, visit recorder, track,
/// MQTT outbox), the stay recorder (with a store) or detector (without one), the NDJSON printer,
/// and the ``WaymarkPipeline`` through them. The two commands differ only in where the fixes
/// come from.
struct ReplayComposition {
  /// The place side, `nil` without places, a store or MQTT.
  let places: ReplayPlaceSession?
  /// The stays written to the store, `nil` without `--visits` or a store.
  let stayRecorder: StayRecorder?
  /// Standard output's sink.
  let printer: NDJSONPrinterSink
  /// The one pipeline the fixes go through.
  let pipeline: WaymarkPipeline
  private let findsStays: Bool

  /// Composes the pipeline that `options` ask for; `source` names the file in the store and in
  /// the VISIT objects.
  ///
  /// - Throws: ``CommandError`` when the places or the store cannot be read.
  init(options: ReplayOptions, source: String, output: OutputSink) throws {
    let context = PipelineContext()
    var places: ReplayPlaceSession?
    if options.placesPath != nil || options.storePath != nil || options.mqtt != nil {
      places = try ReplayPlaceSession(
        placesPath: options.placesPath, storePath: options.storePath, source: source,
        device: options.device, openedStore: options.store, mqtt: options.mqtt, context: context)
    }
    var stayRecorder: StayRecorder?
    if let configuration = options.stays, let database = places?.store {
      do {
        stayRecorder = try StayRecorder(
          database: database, places: .list(places?.places ?? []), configuration: configuration,
          source: source, device: options.device, resumes: false,
          saveIntervalSeconds: .infinity)
      } catch {
        throw StorePath.commandError(error)
      }
    }
    let printer = NDJSONPrinterSink(
      output: output, printsFixes: options.printFixes, printsEvents: places != nil,
      stayPlaces: options.stays == nil ? nil : places?.places ?? [], source: source)
    self.places = places
    self.stayRecorder = stayRecorder
    self.printer = printer
    findsStays = options.stays != nil
    pipeline = WaymarkPipeline(
      tracker: places?.tracker, stayRecorder: stayRecorder,
      stayDetector: options.stays.map { StayDetector(configuration: $0) }, context: context,
      sinks: [printer] + (places?.sinks ?? []))
  }

  /// The summary's lines about events, the store and stays (after the source's own lines).
  var summary: String {
    var summary = places?.summary ?? ""
    if findsStays {
      summary += "visits: \(printer.stayCount)"
      if let stayRecorder { summary += "; store: \(stayRecorder.inserted) new stay(s)" }
      summary += "\n"
    }
    return summary
  }
}
