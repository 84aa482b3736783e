import Foundation
import WaymarkTesting

let dbusDaemon = "/usr/bin/dbus-daemon"

/// A private D-Bus system bus for a test: `dbus-daemon` with a permissive policy and a
/// `unix:path=` listener in `directory`; every process of the test gets its address in
/// `DBUS_SYSTEM_BUS_ADDRESS`.
///
/// - Returns: the running bus and its address (`unix:path=…`).
func startPrivateSystemBus(in directory: TemporaryDirectory) throws -> (DaemonProcess, String) {
  let socket = directory.file("bus.sock")
  let config = try directory.write(
    "bus.conf",
    """
    <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
     "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
    <busconfig>
      <type>system</type>
      <listen>unix:path=\(socket)</listen>
      <auth>EXTERNAL</auth>
      <policy context="default">
        <allow user="*"/>
        <allow own="*"/>
        <allow send_destination="*"/>
        <allow send_type="method_call"/>
        <allow send_type="signal"/>
        <allow send_type="method_return"/>
        <allow send_type="error"/>
        <allow receive_type="method_call"/>
        <allow receive_type="signal"/>
        <allow receive_type="method_return"/>
        <allow receive_type="error"/>
      </policy>
    </busconfig>
    """)
  let bus = try DaemonProcess(
    executable: dbusDaemon, arguments: ["--config-file=\(config)", "--nofork", "--nopidfile"],
    environment: ["PATH": "/usr/bin:/bin"])
  let clock = ContinuousClock()
  let deadline = clock.now + .seconds(10)
  while !FileManager.default.fileExists(atPath: socket) && clock.now < deadline {
    usleep(20_000)
  }
  guard FileManager.default.fileExists(atPath: socket) else {
    throw TestFailure(description: "dbus-daemon made no socket; log:\n\(bus.logText)")
  }
  return (bus, "unix:path=\(socket)")
}
