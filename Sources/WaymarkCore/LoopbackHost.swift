import Glibc

/// Whether a host, as a configuration names it, is this machine's loopback interface: what the
/// outputs that connect out (MQTT, Traccar) ask before warning about plaintext.
public enum LoopbackHost {
  /// Whether `host` names this machine's loopback interface: `localhost` (and its IPv6
  /// names), a literal address in 127.0.0.0/8, `::1` or `::ffff:127.0.0.0/104`, bracketed or
  /// not. Any other name counts as remote, whatever it resolves to today.
  public static func contains(_ host: String) -> Bool {
    var name = host
    if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
    if ["localhost", "localhost.", "ip6-localhost", "ip6-loopback"].contains(name.lowercased()) {
      return true
    }
    var v4 = in_addr()
    if inet_pton(AF_INET, name, &v4) == 1 {
      return UInt32(bigEndian: v4.s_addr) >> 24 == 127
    }
    var v6 = in6_addr()
    guard inet_pton(AF_INET6, name, &v6) == 1 else { return false }
    let bytes = withUnsafeBytes(of: v6) { Array($0) }
    if bytes[0..<15].allSatisfy({ $0 == 0 }) && bytes[15] == 1 { return true }
    let mapped = bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF
    return mapped && bytes[12] == 127
  }
}
