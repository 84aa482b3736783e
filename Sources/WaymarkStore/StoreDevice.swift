/// The names of the devices whose histories a store keeps: each visit, event, stay, track point,
/// saved monitor state and last fix belongs to one device, and the state a device carries from
/// one fix to the next (open visits, the open stay, the monitor's state, the last fix, the track's
/// segments) is its own, so that one device's fixes never close, continue or replace another's.
public enum StoreDevice {
  /// The device of waymarkd's own receiver, of a replay or import that names none, and of every
  /// row of a store written before devices were kept apart (schema version 13).
  public static let local = "local"

  /// The longest device name, in characters.
  public static let maximumLength = 64

  /// Why `name` cannot name a device, or `nil` when it can: a name is 1 to
  /// ``maximumLength`` ASCII letters, digits, `.`, `_` and `-`, starting with a letter or digit.
  public static func problem(_ name: String) -> String? {
    guard !name.isEmpty else { return "a device name cannot be empty" }
    guard name.utf8.count <= maximumLength else {
      return "a device name has at most \(maximumLength) characters"
    }
    for (offset, byte) in name.utf8.enumerated() {
      let alphanumeric =
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
        || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
        || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
      if offset == 0 && !alphanumeric {
        return "a device name starts with an ASCII letter or digit"
      }
      if !alphanumeric && byte != UInt8(ascii: ".") && byte != UInt8(ascii: "_")
        && byte != UInt8(ascii: "-")
      {
        return "a device name has only ASCII letters, digits, '.', '_' and '-'"
      }
    }
    return nil
  }
}
