#if hasFeature(Embedded)
  import CHelperLibc  // waymark-identify: Embedded Swift has no Glibc module
#else
  import Glibc
#endif

/// The most one walk of `/proc` for a socket's holders may examine and take: a user who holds
/// thousands of descriptors (up to their hard limit) makes an identification fail, never last
/// seconds.
package struct WalkBudget: Sendable, Hashable {
  /// Descriptors examined, over every process of the socket's owner.
  package var maximumDescriptors: Int
  /// Monotonic time the walk may take, in milliseconds.
  package var maximumMilliseconds: Int

  /// A budget: by default 65,536 descriptors and 500 ms (a walk of a few hundred processes
  /// and their descriptors takes some tens of milliseconds).
  package init(maximumDescriptors: Int = 65_536, maximumMilliseconds: Int = 500) {
    self.maximumDescriptors = maximumDescriptors
    self.maximumMilliseconds = maximumMilliseconds
  }

  /// The budget of one walk, starting now.
  func start() -> Spending { Spending(budget: self, started: Self.monotonicMilliseconds()) }

  /// What one walk has used of its budget.
  struct Spending {
    let budget: WalkBudget
    let started: Int
    var descriptors = 0

    /// Counts one descriptor examined; checks the time every 256.
    ///
    /// - Throws: ``IdentifyFailure`` once the budget is spent.
    mutating func take() throws(IdentifyFailure) {
      descriptors += 1
      if descriptors > budget.maximumDescriptors {
        throw IdentifyFailure(
          "more than \(budget.maximumDescriptors) descriptors to search; not identified")
      }
      if descriptors & 255 == 0,
        WalkBudget.monotonicMilliseconds() - started > budget.maximumMilliseconds
      {
        throw IdentifyFailure(
          "the search for the socket's holders took over \(budget.maximumMilliseconds) ms; "
            + "not identified")
      }
    }
  }

  static func monotonicMilliseconds() -> Int {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return now.tv_sec * 1000 + now.tv_nsec / 1_000_000
  }
}
