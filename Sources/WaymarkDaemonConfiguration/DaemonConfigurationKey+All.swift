import FoundationEssentials
import GPSD
import Waymark
import WaymarkIdentify
import WaymarkMQTT
import WaymarkTraccar

extension DaemonConfigurationKey {
  /// The opening comment of the shipped file, before the first group.
  static let fileHeader = """
    # /etc/waymark/waymark.conf: configuration of waymarkd (see docs/guide/daemon.md, "Configure").
    #
    # Format: one "key = value" per line; blank lines and lines starting with # or ; are ignored;
    # no inline comments (a hook command may contain #). A value may be wrapped in double quotes.
    # Each key at most once. An error names this file and the line, and waymarkd exits 78.
    # After a change: systemctl reload waymarkd (SIGHUP; the store path needs a restart).
    """

  /// Every key of `waymark.conf`, in the order of the shipped file.
  static let all: [DaemonConfigurationKey] = [
    DaemonConfigurationKey(
      "gpsd", .default("localhost:2947"), opensGroup: true,
      help: """
        gpsd endpoint: host[:port[:device]]. Default localhost:2947 (gpsd.socket).
        """,
      .setting { value, configuration throws(Problem) in
        guard let endpoint = GPSDEndpoint(parsing: value), !endpoint.host.isEmpty else {
          throw Problem("expected host[:port[:device]] with a port in 1...65535")
        }
        configuration.gpsd = endpoint
      }),
    DaemonConfigurationKey(
      "client", .default("waymarkd"), opensGroup: true,
      help: """
        Client id whose grant is checked. It needs "always" with full accuracy:
          sudo -u waymark waymark auth grant waymarkd always --store /var/lib/waymark/waymark.db
        """,
      .setting { value, configuration throws(Problem) in
        guard !value.isEmpty, !value.contains(where: { $0.isWhitespace }) else {
          throw Problem("expected a client id without spaces")
        }
        configuration.clientID = value
      }),
    DaemonConfigurationKey(
      "store", .default("/var/lib/waymark/waymark.db"), opensGroup: true,
      help: """
        Database. Default $STATE_DIRECTORY/waymark.db (/var/lib/waymark/waymark.db under systemd).
        """,
      .setting { value, configuration throws(Problem) in
        guard value.hasPrefix("/") else { throw Problem("expected an absolute path") }
        configuration.storePath = value
      }),
    DaemonConfigurationKey(
      "grants", .none,
      help: """
        Grants (which program of which user gets locations) are kept in the store:
          sudo waymark auth grant alice:/usr/bin/gnome-maps whenInUse --store /var/lib/waymark/waymark.db
        """,
      .retired(
        "no longer used; grants are kept in the store "
          + "(waymark auth grant <client> <level> --store <db>)")),
    DaemonConfigurationKey(
      "socket", .example("/run/waymark/waymark.sock"), opensGroup: true,
      help: """
        The location socket: other processes get locations from the daemon here, under their grants.
        Default under systemd: $RUNTIME_DIRECTORY/waymark.sock (/run/waymark/waymark.sock); "none"
        disables it. Anyone may connect (mode 0666); a peer is identified by the kernel
        (uid, /proc/<pid>/exe) and gets only what its grant allows.
        """,
      .setting { value, configuration throws(Problem) in
        configuration.socketPath = try socketPath(value)
      }),
    DaemonConfigurationKey(
      "nmea-socket", .example("/run/waymark/nmea.sock"),
      help: """
        The NMEA socket: NMEA 0183 (GGA, GSA, GST, RMC) per fix for GeoClue (the whole desktop; see
        docs/guide/desktop.md) and other NMEA readers, under the same grants: GeoClue is
        geoclue:/usr/libexec/geoclue. A peer without a grant is closed at once.
        """,
      .setting { value, configuration throws(Problem) in
        configuration.nmeaSocketPath = try socketPath(value)
      }),
    DaemonConfigurationKey(
      "nmea-tcp", .example("127.0.0.1:10110"),
      help: """
        The same NMEA stream on loopback TCP, for OpenCPN, QGIS and other NMEA-over-TCP readers
        (loopback only: a peer is identified through /proc/net/tcp, with the same grants).
        """,
      .setting { value, configuration throws(Problem) in
        if value.isEmpty || value == "none" {
          configuration.nmeaTCP = nil
          return
        }
        guard let endpoint = NMEATCPEndpoint(parsing: value) else {
          throw Problem(
            "expected 127.x.x.x:<port> (loopback only: peers are identified through /proc), "
              + "or none")
        }
        configuration.nmeaTCP = endpoint
      }),
    DaemonConfigurationKey(
      "socket-clients", .default("1024"),
      help: """
        Connections served at once; bytes a client may leave unread before it is disconnected;
        seconds a REQUEST waits for an agent (waymark agent) before it is answered "denied".
        """,
      .whole(in: 1...100_000) { $0.socketClients = $1 }),
    DaemonConfigurationKey(
      "socket-buffer", .default("65536"),
      .whole(in: 1024...64 << 20, of: "bytes") { $0.socketBufferBytes = $1 }),
    DaemonConfigurationKey(
      "agent-timeout", .default("30"),
      .number(above: 0) { $0.agentTimeoutSeconds = $1 }),
    DaemonConfigurationKey(
      "socket-clients-per-user", .default("64"),
      help: """
        Connections one user may hold at once (root's are not counted), so that one user cannot
        take every slot.
        """,
      .whole(in: 1...100_000) { $0.socketClientsPerUser = $1 }),
    DaemonConfigurationKey(
      "agents", .example("*:/usr/bin/waymark"),
      help: """
        The programs that may answer REQUESTs as agents, as client ids <user>:<exe> (* for any user),
        comma-separated, or none. Default: the waymark installed next to waymarkd, for any user.
        An agent's answer counts only when it runs as root or in group waymark, or when polkit
        confirms it; otherwise the program is denied. --answer (a script) only as root or group
        waymark.
        """,
      .setting { value, configuration throws(Problem) in
        var rules: [AgentRule] = []
        if value != "none" {
          for item in value.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" }) {
            guard let rule = AgentRule(parsing: String(item)) else {
              throw Problem(
                "expected <user>:<absolute path> or *:<absolute path>, comma-separated, or none")
            }
            rules.append(rule)
          }
        }
        configuration.agents = rules
      }),
    DaemonConfigurationKey(
      "polkit", .example("yes"),
      help: """
        Every agent's answer (once, whenInUse, always, never) needs proof that a person decided:
        the agent runs as root or in group waymark, or polkit authorizes its process for
        org.waymark.location.grant-own (about its user's own programs) or
        org.waymark.location.grant-other (another user's; docs/guide/socket.md), the question's
        program, decision and accuracy in its message. "no": polkit is not asked, and other
        agents' answers leave the program denied. Default: yes when /usr/bin/pkcheck exists.
        """,
      .onOff(expected: "yes or no") { $0.usesPolkit = $1 }),
    DaemonConfigurationKey(
      "mqtt", .example("broker.example.org:8883"), opensGroup: true,
      help: """
        MQTT, OwnTracks-compatible (docs/guide/fleets.md): locations, transitions and the places
        go to a broker through an outbox in the store (nothing lost while the broker is away).
        host[:port], or unix:<path> for a broker's Unix socket (mosquitto: listener 0 <path>).
        """,
      .setting { value, configuration throws(Problem) in
        guard let settings = MQTTSettings(parsing: value) else {
          throw Problem("expected host[:port] with a port in 1...65535, or unix:<absolute path>")
        }
        configuration.mqtt = settings
      }),
    DaemonConfigurationKey(
      "mqtt-topic", .example("owntracks/waymark/van-7"),
      help: """
        Base topic: locations there, transitions on <topic>/event, the places on <topic>/waypoints,
        commands (setWaypoints) read from <topic>/cmd. Default owntracks/waymark/<device>, where
        <device> is <hostname>-<12 hex digits from /etc/machine-id, hashed>: unique per machine, also
        in a fleet flashed from one image ('waymark status' prints it). mqtt-tid and mqtt-client-id
        default to the same identity.
        """,
      .mqtt { value, settings throws(Problem) in
        guard !value.isEmpty, !value.contains("#"), !value.contains("+"), !value.hasSuffix("/")
        else { throw Problem("expected a topic without wildcards or a trailing '/'") }
        settings.topic = value
      }),
    DaemonConfigurationKey(
      "mqtt-tid", .example("v7"),
      .mqtt { value, settings throws(Problem) in
        guard (1...2).contains(value.count) else { throw Problem("expected 1 or 2 characters") }
        settings.tid = value
      }),
    DaemonConfigurationKey(
      "mqtt-qos", .default("1"),
      help: """
        QoS of locations and the places: 0, 1 (default: at least once) or 2. Transitions always go
        at QoS 2 (exactly once).
        """,
      .mqtt { value, settings throws(Problem) in
        guard let qos = Int(value), (0...2).contains(qos) else {
          throw Problem("expected 0, 1 or 2")
        }
        settings.qos = qos
      }),
    DaemonConfigurationKey(
      "mqtt-interval", .default("30"),
      help: """
        Seconds of fix time between location messages; 0 = every fix.
        """,
      .mqtt { value, settings throws(Problem) in
        settings.intervalSeconds = try number(value, atLeast: 0)
      }),
    DaemonConfigurationKey(
      "mqtt-username", .example("van-7"),
      .mqtt { value, settings throws(Problem) in
        settings.username = value.isEmpty ? nil : value
      }),
    DaemonConfigurationKey(
      "mqtt-password-file", .example("/etc/waymark/mqtt-password"),
      help: """
        The password, on the file's first line. Refused when group or others may read the file:
        chown waymark: and chmod 600 it.
        """,
      .mqtt { value, settings throws(Problem) in
        if let problem = DaemonConfiguration.secretFileProblem(value) { throw Problem(problem) }
        guard let data = FileManager.default.contents(atPath: value),
          let text = String(data: data, encoding: .utf8)
        else { throw Problem("cannot read '\(value)'") }
        settings.password = String(text.trimmedWhitespace)
      }),
    DaemonConfigurationKey(
      "mqtt-tls", .example("yes"),
      help: """
        TLS: on by default on port 8883 or with mqtt-cafile; the broker's certificate is verified
        against the system's CA store. Plaintext to a broker that is not on a loopback address is
        warned about at start.
        """,
      .mqtt { value, settings throws(Problem) in
        settings.tls = try yesOrNo(value)
      }),
    DaemonConfigurationKey(
      "mqtt-cafile", .example("/etc/ssl/certs/ca-certificates.crt"),
      help: """
        A CA certificate that verifies the broker instead of the system's CA store (TLS on).
        """,
      .mqtt { value, settings throws(Problem) in
        settings.caFile = try readableFile(value)
      }),
    DaemonConfigurationKey(
      "mqtt-remote-commands", .default("no"),
      help: """
        setWaypoints from a plaintext link to a broker that is not on a loopback address: ignored
        unless yes.
        """,
      .mqtt { value, settings throws(Problem) in
        settings.acceptsRemoteCommands = try yesOrNo(value)
      }),
    DaemonConfigurationKey(
      "mqtt-broker-user", .default("mosquitto"),
      help: """
        A broker on this machine (a Unix socket, or a loopback address) must be held by this user
        or root: its socket file and directory, or every listener on its port. Checked before
        each connection (a socket's peer again once connected); a squatter gets nothing.
        """,
      .mqtt { value, settings throws(Problem) in
        guard !value.isEmpty, value.allSatisfy({ $0.isLetter || $0.isNumber || "-_.".contains($0) })
        else { throw Problem("expected a user name") }
        settings.brokerUser = value
      }),
    DaemonConfigurationKey(
      "mqtt-client-id", .example("waymark-van-7"),
      .mqtt { value, settings throws(Problem) in
        guard !value.isEmpty else { throw Problem("expected a client id") }
        settings.clientID = value
      }),
    DaemonConfigurationKey(
      "mqtt-outbox-max", .default("100000"),
      help: """
        Messages the outbox may hold; past it the oldest locations go, then the oldest
        transitions (their visits stay in the store); a new places message replaces a waiting one.
        """,
      .mqtt { value, settings throws(Problem) in
        settings.outboxMaximum = try outboxLimit(value)
      }),
    DaemonConfigurationKey(
      "mqtt-homeassistant", .default("no"),
      help: """
        yes: Home Assistant's MQTT discovery (docs/guide/home-assistant.md): retained configs for a
        device tracker (the declared place it is in as its location name) and sensors for the fix
        mode, satellites used, speed and the current stay; their state on
        <topic>/homeassistant/state, online/offline on <topic>/homeassistant/availability (the
        last will sets it offline, instead of OwnTracks' lwt). Back to no: the configs are removed
        from the broker at the next start.
        """,
      .mqtt { value, settings throws(Problem) in
        settings.publishesHomeAssistant = try yesOrNo(value)
      }),
    DaemonConfigurationKey(
      "mqtt-homeassistant-prefix", .default("homeassistant"),
      help: """
        Home Assistant's discovery prefix (its MQTT integration's setting).
        """,
      .mqtt { value, settings throws(Problem) in
        guard !value.isEmpty, !value.contains("#"), !value.contains("+"), !value.hasSuffix("/")
        else { throw Problem("expected a topic without wildcards or a trailing '/'") }
        settings.homeAssistantPrefix = value
      }),
    DaemonConfigurationKey(
      "traccar", .example("https://traccar.example.org:5055"), opensGroup: true,
      help: """
        Traccar (docs/guide/traccar.md): locations to a Traccar server in the OsmAnd protocol over
        HTTP(S), through an outbox in the store (nothing lost, in order, while the server is away).
        The server's OsmAnd URL; https is verified against the system's CA store, plaintext to a
        server that is not on a loopback address is warned about at start. Needs Debian's libcurl4.
        """,
      .setting { value, configuration throws(Problem) in
        guard
          let settings = TraccarSettings(url: value, deviceID: MQTTIdentity.current().device)
        else {
          throw Problem("expected an http:// or https:// URL with a host, without spaces or '#'")
        }
        configuration.traccar = settings
      }),
    DaemonConfigurationKey(
      "traccar-id", .example("van-7"),
      help: """
        The device's identifier on the server. Default: the device name 'waymark status' prints
        (<hostname>-<12 hex digits>, unique per machine).
        """,
      .traccar { value, settings throws(Problem) in
        guard !value.isEmpty else { throw Problem("expected an identifier") }
        settings.deviceID = value
      }),
    DaemonConfigurationKey(
      "traccar-interval", .default("30"),
      help: """
        Seconds of fix time between locations while the device moves; while it stays within
        traccar-distance metres of the last one sent, a heartbeat (the newest fix) every
        traccar-heartbeat seconds.
        """,
      .traccar { value, settings throws(Problem) in
        settings.intervalSeconds = try number(value, atLeast: 0)
      }),
    DaemonConfigurationKey(
      "traccar-distance", .default("20"),
      .traccar { value, settings throws(Problem) in
        settings.distanceMeters = try number(value, atLeast: 0)
      }),
    DaemonConfigurationKey(
      "traccar-heartbeat", .default("300"),
      .traccar { value, settings throws(Problem) in
        settings.heartbeatSeconds = try number(value, atLeast: 1)
      }),
    DaemonConfigurationKey(
      "traccar-cafile", .example("/etc/ssl/certs/ca-certificates.crt"),
      help: """
        A CA certificate that verifies the server instead of the system's CA store.
        """,
      .traccar { value, settings throws(Problem) in
        settings.caFile = try readableFile(value)
      }),
    DaemonConfigurationKey(
      "traccar-outbox-max", .default("100000"),
      help: """
        Locations the outbox may hold for the server; past it the oldest go.
        """,
      .traccar { value, settings throws(Problem) in
        settings.outboxMaximum = try outboxLimit(value)
      }),
    DaemonConfigurationKey(
      "maximum-accuracy", .default("50"), opensGroup: true,
      help: """
        Detection defaults (a place may override some in its GeoJSON properties). Fixes with a
        horizontal accuracy worse than maximum-accuracy metres are ignored; a fix without accuracy
        counts as assumed-accuracy metres; the exit radius is max(radius x exit-radius-factor,
        radius + exit-margin metres); confirmations consecutive fixes and dwell seconds of fix time
        confirm a change; fix-loss seconds without fixes count as a fix loss.
        """,
      .number(above: 0) { $0.detection.maximumAccuracyMeters = $1 }),
    DaemonConfigurationKey(
      "assumed-accuracy", .default("25"),
      .number(above: 0) { $0.detection.assumedAccuracyMeters = $1 }),
    DaemonConfigurationKey(
      "exit-radius-factor", .default("1.2"),
      .setting { value, configuration throws(Problem) in
        let factor = try number(value, above: 0)
        guard factor >= 1 else { throw Problem("expected a number >= 1") }
        configuration.detection.exitRadiusFactor = factor
      }),
    DaemonConfigurationKey(
      "exit-margin", .default("30"),
      .number(atLeast: 0) { $0.detection.exitMarginMeters = $1 }),
    DaemonConfigurationKey(
      "confirmations", .default("3"),
      .whole(in: 1...1000) { $0.detection.confirmations = $1 }),
    DaemonConfigurationKey(
      "dwell", .default("0"),
      .number(atLeast: 0) { $0.detection.dwellSeconds = $1 }),
    DaemonConfigurationKey(
      "fix-loss", .default("30"),
      .number(above: 0) { $0.detection.fixLossSeconds = $1 }),
    DaemonConfigurationKey(
      "stays", .default("on"), opensGroup: true,
      help: """
        Stays anywhere (docs/guide/stays.md): where the device remained within a radius that adapts
        to the fixes' error for at least visit-min-duration seconds of fix time is a stay, recorded
        in the store whether or not a place is declared there ('waymark visits' lists it, 'waymark
        places suggest' proposes places from them). "stays = off" records none. A gap in the fixes
        of up to visit-max-gap seconds (a phone's logger asleep at home overnight) does not end
        a stay when the device reappears within walking reach; a longer one ends it at its start.
        """,
      .onOff(expected: "on or off") { $0.recordsStays = $1 }),
    DaemonConfigurationKey(
      "visit-min-duration", .default("120"),
      .setting { value, configuration throws(Problem) in
        let seconds = try number(value, atLeast: 0)
        guard seconds <= 86_400 else { throw Problem("expected at most 86400") }
        configuration.stays.minimumDurationSeconds = seconds
      }),
    DaemonConfigurationKey(
      "visit-max-gap", .default("43200"),
      .setting { value, configuration throws(Problem) in
        let seconds = try number(value, atLeast: 0)
        guard seconds <= 604_800 else { throw Problem("expected at most 604800") }
        configuration.stays.maximumBridgedGapSeconds = seconds
      }),
    DaemonConfigurationKey(
      "arrival-hook",
      .example(#"printf 'arrived at %s\n' "$WAYMARK_PLACE_NAME" | logger -t waymark"#),
      opensGroup: true,
      help: """
        Hooks: a /bin/sh command run on each event, with the event as JSON on standard input and in
        WAYMARK_* environment variables. They run one at a time, off the monitoring path; at most
        hook-queue events wait (the oldest is dropped beyond that); each may run hook-timeout seconds.
        Pass place data through standard input or the environment, never as a program's argument:
        every user reads every process's command line (/proc/<pid>/cmdline). (printf is built
        into the shell: its arguments reach no command line.)
        """,
      .setting { value, configuration throws(Problem) in
        configuration.arrivalHook = value.isEmpty ? nil : value
      }),
    DaemonConfigurationKey(
      "departure-hook",
      .example(
        #"printf 'left %s after %s s\n' "$WAYMARK_PLACE_NAME" "$WAYMARK_DURATION" | logger -t waymark"#
      ),
      .setting { value, configuration throws(Problem) in
        configuration.departureHook = value.isEmpty ? nil : value
      }),
    DaemonConfigurationKey(
      "hook-timeout", .default("10"),
      .number(above: 0) { $0.hookTimeoutSeconds = $1 }),
    DaemonConfigurationKey(
      "hook-queue", .default("32"),
      .whole(in: 1...10_000) { $0.hookQueueCapacity = $1 }),
    DaemonConfigurationKey(
      "track", .default("on"), opensGroup: true,
      help: """
        The track (docs/guide/tracks-and-map.md): accepted fixes (2D/3D with a time, horizontal accuracy
        at most track-maximum-accuracy metres or unknown) are kept when at least track-min-distance
        metres from the last kept point or track-min-interval seconds of fix time after it (both 0:
        every fix); more than track-gap seconds without an accepted fix starts a new segment, whose
        first fix is always kept. Points are written track-batch at a time, or when a point has waited
        track-batch-interval seconds of fix time (and on every save and on stop): a crash loses at most
        those. Points older than track-retention-days before the latest one are deleted (hourly; 0 keeps
        everything). "track = off" records nothing. Export: waymark track export.
        """,
      .onOff(expected: "on or off") { $0.recordsTrack = $1 }),
    DaemonConfigurationKey(
      "track-min-distance", .default("10"),
      .number(atLeast: 0) { $0.track.rule.minimumDistanceMeters = $1 }),
    DaemonConfigurationKey(
      "track-min-interval", .default("30"),
      .number(atLeast: 0) { $0.track.rule.minimumIntervalSeconds = $1 }),
    DaemonConfigurationKey(
      "track-gap", .default("10"),
      .number(above: 0) { $0.track.rule.gapSeconds = $1 }),
    DaemonConfigurationKey(
      "track-maximum-accuracy", .default("50"),
      .number(above: 0) { $0.track.rule.maximumAccuracyMeters = $1 }),
    DaemonConfigurationKey(
      "track-batch", .default("100"),
      .whole(in: 1...100_000, of: "points") { $0.track.batchPoints = $1 }),
    DaemonConfigurationKey(
      "track-batch-interval", .default("30"),
      .number(above: 0) { $0.track.batchSeconds = $1 }),
    DaemonConfigurationKey(
      "track-retention-days", .default("30"),
      .whole(in: 0...36_500, of: "days") { $0.track.retentionDays = $1 }),
    DaemonConfigurationKey(
      "authorization-check", .default("30"), opensGroup: true,
      help: """
        Seconds between grant checks when the store cannot be watched (no socket, no inotify); with a
        socket, a change of the store triggers the check and no timer runs (SIGHUP checks at once).
        """,
      .number(above: 0) { $0.authorizationCheckSeconds = $1 }),
    DaemonConfigurationKey(
      "save-interval", .default("60"),
      help: """
        Seconds between saves of the monitor state while fixes come (also saved on every event and on
        stop; nothing is saved while the receiver is silent).
        """,
      .number(above: 0) { $0.saveIntervalSeconds = $1 }),
    DaemonConfigurationKey(
      "save-interval-inside", .default("5"),
      help: """
        While a visit is open, also save every this many seconds of fix time: after a crash, a
        departure is dated by the last fix inside that was saved, so this bounds how much of a stay
        a kill -9 can lose.
        """,
      .number(above: 0) { $0.saveIntervalInsideSeconds = $1 }),
    DaemonConfigurationKey(
      "fix-time-tolerance", .default("86400"),
      help: """
        Seconds a fix's time may be ahead of the system clock. A fix dated further ahead (a
        spoofed or broken receiver) is logged and ignored: it could otherwise end the track's
        retention window and hold stays and reduced releases until that date. A machine whose
        clock is behind (no RTC, not yet synchronized) ignores fixes until its clock is set.
        """,
      .number(above: 0) { $0.fixTimeToleranceSeconds = $1 }),
    DaemonConfigurationKey(
      "log-level", .default("info"),
      help: """
        err, warning, notice, info or debug. Only debug logs coordinates.
        """,
      .setting { value, configuration throws(Problem) in
        guard let level = LogPriority(name: value) else {
          throw Problem("expected err, warning, notice, info or debug")
        }
        configuration.logLevel = level
      }),
  ]
}
