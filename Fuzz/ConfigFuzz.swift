// libFuzzer entry point for waymarkd's configuration parser (waymark.conf). Built by
// Fuzz/run-parsers.sh config; not part of the package.
import FoundationEssentials
import Waymark
import WaymarkDaemonConfiguration

private let path = "/fuzz/waymark.conf"

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfiguration(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  // Like DaemonConfiguration.load: text that is not UTF-8 is refused before parsing.
  guard let text = String(validating: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
  else { return 0 }
  let result = parse(text)
  // Deterministic: the same text gives the same answer.
  precondition(parse(text) == result, "two parses of the same text differ")
  let lineCount = text.utf8.reduce(1) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
  switch result {
  case .failure(let error):
    precondition(error.path == path && !error.message.isEmpty, "an error without its file")
    if let line = error.line { precondition((1...lineCount).contains(line), "line \(line)") }
  case .success(let configuration):
    checkRanges(configuration)
  }
  // A comment line first changes nothing but the line numbers.
  let shifted = parse("# a comment\n" + text)
  switch (result, shifted) {
  case (.success(let first), .success(let second)):
    precondition(first == second, "a leading comment changed the configuration")
  case (.failure(let first), .failure(let second)):
    precondition(second.line == first.line.map { $0 + 1 }, "a leading comment moved the error")
  default:
    preconditionFailure("a leading comment changed whether the file is accepted")
  }
  // CRLF line ends read as LF ones (a file edited on Windows).
  if !text.utf8.contains(UInt8(ascii: "\r")) {
    let crlf = String(text.replacing("\n", with: "\r\n"))
    switch (result, parse(crlf)) {
    case (.success(let first), .success(let second)):
      precondition(first == second, "CRLF line ends changed the configuration")
    case (.failure(let first), .failure(let second)):
      precondition(first.line == second.line, "CRLF line ends moved the error")
    default:
      preconditionFailure("CRLF line ends changed whether the file is accepted")
    }
  }
  return 0
}

private func parse(_ text: String) -> Result<DaemonConfiguration, DaemonConfigurationError> {
  Result { () throws(DaemonConfigurationError) in
    try DaemonConfiguration.parse(text, path: path, environment: [:])
  }
}

/// Every accepted value is one the daemon can use.
private func checkRanges(_ configuration: DaemonConfiguration) {
  precondition(!configuration.gpsd.host.isEmpty && configuration.gpsd.port > 0, "gpsd endpoint")
  precondition(!configuration.clientID.isEmpty, "empty client id")
  precondition(configuration.storePath.hasPrefix("/"), "relative store path")
  for socket in [configuration.socketPath, configuration.nmeaSocketPath].compactMap({ $0 }) {
    precondition(socket.hasPrefix("/") && socket.utf8.count < 108, "socket path \(socket)")
  }
  if let tcp = configuration.nmeaTCP { precondition(tcp.host.hasPrefix("127.") && tcp.port > 0) }
  precondition((1...100_000).contains(configuration.socketClients), "socket-clients")
  precondition((1024...(64 << 20)).contains(configuration.socketBufferBytes), "socket-buffer")
  let positive = [
    configuration.agentTimeoutSeconds, configuration.detection.maximumAccuracyMeters,
    configuration.detection.assumedAccuracyMeters, configuration.detection.fixLossSeconds,
    configuration.hookTimeoutSeconds, configuration.authorizationCheckSeconds,
    configuration.saveIntervalSeconds, configuration.saveIntervalInsideSeconds,
    configuration.track.rule.gapSeconds, configuration.track.rule.maximumAccuracyMeters,
    configuration.track.batchSeconds,
  ]
  for value in positive {
    precondition(value.isFinite && value > 0, "a duration or length \(value)")
  }
  let nonNegative = [
    configuration.detection.exitMarginMeters, configuration.detection.dwellSeconds,
    configuration.track.rule.minimumDistanceMeters, configuration.track.rule.minimumIntervalSeconds,
  ]
  for value in nonNegative { precondition(value.isFinite && value >= 0, "a margin \(value)") }
  let factor = configuration.detection.exitRadiusFactor
  precondition(factor.isFinite && factor >= 1, "exit-radius-factor \(factor)")
  precondition((1...1000).contains(configuration.detection.confirmations), "confirmations")
  precondition((1...10_000).contains(configuration.hookQueueCapacity), "hook-queue")
  precondition((1...100_000).contains(configuration.track.batchPoints), "track-batch")
  precondition((0...36_500).contains(configuration.track.retentionDays), "track-retention-days")
  if let mqtt = configuration.mqtt {
    precondition(!mqtt.host.isEmpty && mqtt.port > 0 && (0...2).contains(mqtt.qos), "mqtt")
    precondition(!mqtt.topic.isEmpty && (1...2).contains(mqtt.tid.count), "mqtt topic or tid")
    precondition(mqtt.intervalSeconds.isFinite && mqtt.intervalSeconds >= 0, "mqtt-interval")
    precondition(mqtt.outboxMaximum >= 100, "mqtt-outbox-max")
  }
}
