import Waymark

extension Monitor {
  /// `await CLMonitor(name)`: the monitor `name` over live locations, as
  /// ``Monitor/init(named:source:directory:configuration:)`` opens it.
  ///
  /// CoreLocation's initializer cannot fail; this one stops the program with the reason when
  /// Waymark refuses the name (a `/`, `..`, a control character), finds it in use by another
  /// run, or cannot write its file. Use ``Monitor/init(named:source:directory:configuration:)``
  /// to handle those as errors.
  public init(_ name: String) async {
    do {
      try await self.init(named: name)
    } catch {
      fatalError("CLMonitor(\(LogText.escaped(name))): \(error)")
    }
  }
}
