import WaymarkStore

/// How `waymark replay` names the device of each log (`--device`, `--device-from`): the store
/// keeps each device's history apart, and a log's fixes continue its own device's state only.
enum ReplayDevices {
  /// Where the device names come from.
  enum Rule: Equatable {
    /// `--device <name>`: every log is this device's (without either option:
    /// ``StoreDevice/local``, waymarkd's own device).
    case named(String)
    /// `--device-from stem`: a log's file name up to its first `.`.
    case stem
    /// `--device-from dir`: the name of the directory the log is in.
    case directory
  }

  /// The rule that `--device` and `--device-from` ask for.
  ///
  /// - Throws: ``CommandError`` (usage) when both are given, the rule is unknown or the name
  ///   is not a device name.
  static func rule(device: String?, from: String?) throws -> Rule {
    switch (device, from) {
    case (.some, .some):
      throw CommandError.usage("'--device' and '--device-from' cannot both be given.")
    case (.some(let name), nil):
      return .named(try Self.device(name))
    case (nil, .some("stem")): return .stem
    case (nil, .some("dir")): return .directory
    case (nil, .some(let text)):
      throw CommandError.usage("'--device-from' expects 'stem' or 'dir', got '\(text)'.")
    case (nil, nil): return .named(StoreDevice.local)
    }
  }

  /// `name`, given to `--device` (here and in `waymark track`), when it names a device.
  ///
  /// - Throws: ``CommandError`` (usage) saying why it does not.
  static func device(_ name: String) throws -> String {
    if let problem = StoreDevice.problem(name) {
      throw CommandError.usage("'--device' got '\(name)': \(problem).")
    }
    return name
  }

  /// The device of each of `paths`, in order.
  ///
  /// - Throws: ``CommandError`` (usage) naming the first log whose name gives no device name,
  ///   and why.
  static func names(of paths: [String], rule: Rule) throws -> [String] {
    try paths.map { path in
      let name: Substring
      let option: String
      switch rule {
      case .named(let device): return device
      case .stem:
        let file = path.split(separator: "/", omittingEmptySubsequences: true).last ?? ""
        name = file.prefix { $0 != "." }
        option = "stem"
      case .directory:
        var parts = path.split(separator: "/", omittingEmptySubsequences: true)
        parts.removeLast()
        // A path without a directory is in the working directory, which has no name here.
        name = parts.last ?? ""
        option = "dir"
      }
      let device = String(name)
      guard path != "-" else {
        throw CommandError.usage("'--device-from \(option)' cannot name the device of '-'.")
      }
      if let problem = StoreDevice.problem(device) {
        throw CommandError.usage(
          "'\(path)': '--device-from \(option)' gives the device name '\(device)': \(problem).")
      }
      return device
    }
  }
}
