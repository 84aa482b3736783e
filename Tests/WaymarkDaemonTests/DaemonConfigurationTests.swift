import Foundation
import Testing
import Waymark
import WaymarkBroker
import WaymarkIdentify
import WaymarkTesting

@testable import WaymarkCLI
@testable import WaymarkDaemonConfiguration
@testable import WaymarkPipeline

@Suite struct DaemonConfigurationTests {
  @Test func defaultsFollowTheStateDirectory() throws {
    let systemd = DaemonConfiguration(environment: ["STATE_DIRECTORY": "/var/lib/waymark:/x"])
    #expect(systemd.storePath == "/var/lib/waymark/waymark.db")
    #expect(systemd.socketPath == nil)
    let runtime = DaemonConfiguration(environment: ["RUNTIME_DIRECTORY": "/run/waymark"])
    #expect(runtime.socketPath == "/run/waymark/waymark.sock")
    let bare = DaemonConfiguration(environment: [:])
    #expect(bare.storePath == "/var/lib/waymark/waymark.db")
    #expect(bare.gpsd.description == "localhost:2947")
    #expect(bare.clientID == "waymarkd")
    #expect(bare.detection.confirmations == 3)
    #expect(bare.logLevel == .info)
  }

  @Test func parsesEveryKey() throws {
    let text = """
      # comment
      ; another comment

      gpsd = 127.0.0.1:3000:/dev/ttyACM0
      client = org.example.daemon
      store = /srv/waymark/places.db
      maximum-accuracy = 40
      assumed-accuracy = 20
      exit-radius-factor = 1.5
      exit-margin = 25
      confirmations = 4
      dwell = 60
      fix-loss = 45
      arrival-hook = echo "arrived # here" >> /tmp/log
      departure-hook = "  logger left  "
      hook-timeout = 2.5
      hook-queue = 5
      authorization-check = 7
      save-interval = 15
      socket = /run/w/s.sock
      socket-clients = 10
      socket-clients-per-user = 3
      agents = *:/usr/bin/waymark, alice:/opt/agent
      socket-buffer = 4096
      agent-timeout = 2
      log-level = debug\r
      """
    let configuration = try DaemonConfiguration.parse(text, path: "t.conf", environment: [:])
    #expect(configuration.gpsd.host == "127.0.0.1")
    #expect(configuration.gpsd.port == 3000)
    #expect(configuration.gpsd.device == "/dev/ttyACM0")
    #expect(configuration.clientID == "org.example.daemon")
    #expect(configuration.storePath == "/srv/waymark/places.db")
    #expect(configuration.socketPath == "/run/w/s.sock")
    #expect(configuration.socketClients == 10)
    #expect(configuration.socketClientsPerUser == 3)
    #expect(
      configuration.agents == [
        AgentRule(user: nil, executable: "/usr/bin/waymark"),
        AgentRule(user: "alice", executable: "/opt/agent"),
      ])
    #expect(configuration.socketBufferBytes == 4096)
    #expect(configuration.agentTimeoutSeconds == 2)
    #expect(configuration.detection.maximumAccuracyMeters == 40)
    #expect(configuration.detection.assumedAccuracyMeters == 20)
    #expect(configuration.detection.exitRadiusFactor == 1.5)
    #expect(configuration.detection.exitMarginMeters == 25)
    #expect(configuration.detection.confirmations == 4)
    #expect(configuration.detection.dwellSeconds == 60)
    #expect(configuration.detection.fixLossSeconds == 45)
    #expect(configuration.arrivalHook == "echo \"arrived # here\" >> /tmp/log")
    #expect(configuration.departureHook == "  logger left  ")
    #expect(configuration.hookTimeoutSeconds == 2.5)
    #expect(configuration.hookQueueCapacity == 5)
    #expect(configuration.authorizationCheckSeconds == 7)
    #expect(configuration.saveIntervalSeconds == 15)
    #expect(configuration.logLevel == .debug)
  }

  @Test(
    arguments: [
      ("gpsd = localhost:99999", 1, "gpsd"),
      ("\n\nnonsense", 3, "expected 'key = value'"),
      ("colour = blue", 1, "unknown key 'colour'"),
      ("confirmations = 0", 1, "confirmations"),
      ("maximum-accuracy = -3", 1, "maximum-accuracy"),
      ("dwell = soon", 1, "expected a number"),
      ("store = relative.db", 1, "absolute"),
      ("grants = /var/lib/waymark", 1, "grants are kept in the store"),
      ("socket = relative.sock", 1, "socket: expected an absolute path"),
      ("nmea-tcp = 0.0.0.0:10110", 1, "loopback only"),
      ("agents = waymark", 1, "agents: expected <user>:<absolute path>"),
      ("agents = *:relative/waymark", 1, "agents: expected"),
      ("socket-clients-per-user = 0", 1, "socket-clients-per-user"),
      ("gpsd = localhost\nmqtt-topic = a/b", 2, "mqtt-topic needs mqtt"),
      ("mqtt = broker:0", 1, "mqtt: expected host[:port]"),
      ("mqtt = broker\nmqtt-qos = 3", 2, "mqtt-qos: expected 0, 1 or 2"),
      ("mqtt = broker\nmqtt-topic = a/#", 2, "without wildcards"),
      ("mqtt = broker\nmqtt-password-file = /nonexistent/pw", 2, "cannot read"),
      ("mqtt = broker\nmqtt-outbox-max = 5", 2, "mqtt-outbox-max"),
      ("log-level = chatty", 1, "log-level"),
      ("client = two words", 1, "client"),
      ("= 3", 1, "missing key"),
      ("hook-timeout = 1\n# x\nhook-timeout = 2", 3, "already set on line 1"),
      ("exit-radius-factor = 0.5", 1, ">= 1"),
      ("track = maybe", 1, "track: expected on or off"),
      ("\ntrack-min-distance = -1", 2, "track-min-distance: expected a number >= 0"),
      ("track-min-interval = often", 1, "track-min-interval: expected a number"),
      ("track-gap = 0", 1, "track-gap: expected a number > 0"),
      ("track-maximum-accuracy = 0", 1, "track-maximum-accuracy: expected a number > 0"),
      ("track-batch = 0", 1, "track-batch: expected a whole number of points"),
      ("track-batch-interval = -5", 1, "track-batch-interval: expected a number > 0"),
      ("track-retention-days = 1.5", 1, "track-retention-days: expected a whole number"),
    ])
  func rejectsWithFileAndLine(text: String, line: Int, fragment: String) {
    do {
      _ = try DaemonConfiguration.parse(text, path: "/etc/waymark/waymark.conf", environment: [:])
      Issue.record("accepted: \(text)")
    } catch {
      #expect(error.line == line)
      #expect(error.description.hasPrefix("/etc/waymark/waymark.conf:\(line): "))
      #expect(error.description.contains(fragment), "\(error)")
    }
  }

  @Test func parsesTheTrackKeys() throws {
    let bare = DaemonConfiguration(environment: [:])
    #expect(bare.recordsTrack)
    #expect(bare.track == TrackRecorder.Settings())
    #expect(bare.track.rule.minimumDistanceMeters == 10)
    #expect(bare.track.rule.minimumIntervalSeconds == 30)
    #expect(bare.track.rule.gapSeconds == 10)
    #expect(bare.track.retentionDays == 30)
    let text = """
      track = off
      track-min-distance = 0
      track-min-interval = 5.5
      track-gap = 20
      track-maximum-accuracy = 15
      track-batch = 500
      track-batch-interval = 120
      track-retention-days = 0
      """
    let configuration = try DaemonConfiguration.parse(text, path: "t.conf", environment: [:])
    #expect(!configuration.recordsTrack)
    #expect(
      configuration.track
        == TrackRecorder.Settings(
          rule: .init(
            minimumDistanceMeters: 0, minimumIntervalSeconds: 5.5, gapSeconds: 20,
            maximumAccuracyMeters: 15),
          batchPoints: 500, batchSeconds: 120, retentionDays: 0))
    #expect(
      try DaemonConfiguration.parse("track = on", path: "t.conf", environment: [:]).recordsTrack)
  }

  @Test func theShippedConfigurationParsesAsIsAndWithEveryKeyUncommented() throws {
    let path = Products.packageRoot.appendingPathComponent("config/waymark.conf").path
    let text = try String(contentsOfFile: path, encoding: .utf8)
    let asShipped = try DaemonConfiguration.parse(text, path: path, environment: [:])
    #expect(asShipped == DaemonConfiguration(environment: [:]))
    // Uncomment every "#key = value" line: each documented key must parse.
    var keys: [String] = []
    let uncommented = text.split(separator: "\n", omittingEmptySubsequences: false).map {
      line -> String in
      guard line.hasPrefix("#"), let equals = line.firstIndex(of: "="),
        !line.dropFirst().hasPrefix(" ")
      else { return String(line) }
      keys.append(line.dropFirst()[..<equals].trimmingCharacters(in: .whitespaces))
      return String(line.dropFirst())
    }.joined(separator: "\n")
    #expect(keys.count >= 18, "\(keys)")
    // The files the MQTT examples name must exist to parse: stand-ins in a temporary directory.
    let directory = try TemporaryDirectory()
    let password = try directory.write("mqtt-password", "secret\n")
    chmod(password, 0o600)  // a password file others may read is refused
    let ca = try directory.write("ca.crt", "stand-in\n")
    let withFiles =
      uncommented
      .replacingOccurrences(of: "/etc/waymark/mqtt-password", with: password)
      .replacingOccurrences(of: "/etc/ssl/certs/ca-certificates.crt", with: ca)
    let parsed = try DaemonConfiguration.parse(withFiles, path: path, environment: [:])
    #expect(parsed.mqtt?.password == "secret" && parsed.mqtt?.caFile == ca)
    #expect(parsed.arrivalHook != nil && parsed.departureHook != nil)
  }

  /// The shipped hook examples put no place data on a command line (every user reads
  /// `/proc/<pid>/cmdline`): each `$WAYMARK_…` is expanded only in the shell's own `printf`,
  /// before the pipe to the program that gets it on standard input.
  @Test func theHookExamplesPassNothingOnACommandLine() throws {
    for name in ["arrival-hook", "departure-hook"] {
      let key = try #require(DaemonConfigurationKey.all.first { $0.name == name })
      guard case .example(let command) = key.shown else {
        Issue.record("\(name) shows no example")
        continue
      }
      let stages = command.split(separator: "|")
      #expect(stages.count == 2 && stages[0].hasPrefix("printf "), "\(name): \(command)")
      #expect(stages[0].contains("$WAYMARK_PLACE_NAME"), "\(name): the control, data is passed")
      #expect(!stages.dropFirst().contains { $0.contains("$") }, "\(name): \(command)")
    }
  }

  /// The shipped file is written from the key table (name, default, parser, comment), so that
  /// the file, `waymark.conf(5)` (rendered from the file) and the parser cannot drift apart.
  @Test func theShippedFileIsTheOneTheKeyTableWrites() throws {
    let path = Products.packageRoot.appendingPathComponent("config/waymark.conf").path
    let shipped = try String(contentsOfFile: path, encoding: .utf8)
    #expect(shipped == DaemonConfiguration.shippedFile)
    // Every key of the table has its line, except the retired one (which is refused).
    for key in DaemonConfigurationKey.all {
      if case .retired = key.parser {
        #expect(key.shown == .none && !shipped.contains("#\(key.name) ="))
        #expect(throws: DaemonConfigurationError.self) {
          try DaemonConfiguration.parse("\(key.name) = x", path: "t.conf", environment: [:])
        }
      } else {
        #expect(shipped.contains("\n#\(key.name) = "), "\(key.name) has no line")
      }
    }
    #expect(DaemonConfigurationKey.all.count == Set(DaemonConfigurationKey.all.map(\.name)).count)
  }

  /// A value the shipped file shows as the default is the default: setting it changes nothing
  /// (an MQTT key with the link on). Positive control: another value does change it.
  @Test func eachDefaultTheTableShowsIsTheDefault() throws {
    let bare = DaemonConfiguration(environment: [:])
    let link = "mqtt = broker.example.org\n"
    let withLink = try DaemonConfiguration.parse(link, path: "t.conf", environment: [:])
    let server = "traccar = https://traccar.example.org:5055\n"
    let withServer = try DaemonConfiguration.parse(server, path: "t.conf", environment: [:])
    var checked: [String] = []
    for key in DaemonConfigurationKey.all {
      guard case .default(let value) = key.shown else { continue }
      switch key.parser {
      case .setting:
        let parsed = try DaemonConfiguration.parse(
          "\(key.name) = \(value)", path: "t.conf", environment: [:])
        #expect(parsed == bare, "\(key.name) = \(value) is not the default")
      case .mqtt:
        let parsed = try DaemonConfiguration.parse(
          link + "\(key.name) = \(value)", path: "t.conf", environment: [:])
        #expect(parsed == withLink, "\(key.name) = \(value) is not the default")
      case .traccar:
        let parsed = try DaemonConfiguration.parse(
          server + "\(key.name) = \(value)", path: "t.conf", environment: [:])
        #expect(parsed == withServer, "\(key.name) = \(value) is not the default")
      case .retired:
        Issue.record("\(key.name) is retired but shows a default")
      }
      checked.append(key.name)
    }
    #expect(checked.count >= 30, "\(checked)")
    #expect(checked.contains("confirmations") && checked.contains("mqtt-qos"))
    #expect(checked.contains("traccar-heartbeat"))
    let changed = try DaemonConfiguration.parse(
      "confirmations = 4", path: "t.conf", environment: [:])
    #expect(changed != bare)
    let qos = try DaemonConfiguration.parse(link + "mqtt-qos = 2", path: "t.conf", environment: [:])
    #expect(qos != withLink)
    let heartbeat = try DaemonConfiguration.parse(
      server + "traccar-heartbeat = 60", path: "t.conf", environment: [:])
    #expect(heartbeat != withServer)
  }

  @Test("CRLF line ends read as LF ones (the config fuzzer found a CRLF file read as one line)")
  func crlfLineEnds() throws {
    let lf = "gpsd = [::1]:2947:/dev/ttyACM0\nsocket = none\ntrack = off\nconfirmations = 4\n"
    let crlf = lf.replacingOccurrences(of: "\n", with: "\r\n")
    let expected = try DaemonConfiguration.parse(lf, path: "lf.conf", environment: [:])
    let parsed = try DaemonConfiguration.parse(crlf, path: "crlf.conf", environment: [:])
    #expect(parsed == expected)
    #expect(parsed.gpsd.device == "/dev/ttyACM0" && !parsed.recordsTrack)
    #expect(parsed.detection.confirmations == 4)
    // An error in a CRLF file names its own line, not the first.
    #expect(throws: DaemonConfigurationError(path: "c.conf", line: 2, message: "unknown key 'x'")) {
      try DaemonConfiguration.parse("track = on\r\nx = 1\r\n", path: "c.conf", environment: [:])
    }
  }

  @Test func theBinaryExits78NamingFileAndLine() throws {
    let directory = try TemporaryDirectory()
    let path = try directory.write("bad.conf", "gpsd = localhost\nconfirmations = many\n")
    let run = try CommandRun.run(
      Products.executable("waymarkd"), ["--config", path],
      environment: daemonEnvironment(state: directory.path))
    #expect(run.status == 78)
    #expect(run.stderr.hasPrefix("<3>"))
    #expect(run.stderr.contains("\(path):2: confirmations: expected a whole number"))

    let missing = try CommandRun.run(
      Products.executable("waymarkd"), ["--config=\(directory.file("absent.conf"))"],
      environment: daemonEnvironment(state: directory.path))
    #expect(missing.status == 78)
    #expect(missing.stderr.contains("absent.conf: not found"))

    let track = try directory.write("track.conf", "# tracks\n\ntrack-retention-days = forever\n")
    let badTrack = try CommandRun.run(
      Products.executable("waymarkd"), ["--config", track],
      environment: daemonEnvironment(state: directory.path))
    #expect(badTrack.status == 78)
    #expect(badTrack.stderr.contains("\(track):3: track-retention-days: expected a whole number"))
  }

  @Test func usageErrorsExit64AndHelpExits0() throws {
    let waymarkd = Products.executable("waymarkd")
    let unknown = try CommandRun.run(waymarkd, ["--verbose"])
    #expect(unknown.status == 64)
    #expect(unknown.stderr.hasPrefix("Error: Unknown option '--verbose'."))
    #expect(unknown.stderr.contains("USAGE: waymarkd [--config <file>]"))
    let missing = try CommandRun.run(waymarkd, ["--config"])
    #expect(missing.status == 64)
    let help = try CommandRun.run(waymarkd, ["--help"])
    #expect(help.status == 0)
    #expect(help.output.hasPrefix("USAGE: waymarkd [--config <file>]"))
    #expect(help.stderr.isEmpty)
  }
}
