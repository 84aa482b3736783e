/// What a ``Channel`` operation found to do once its lock is released: the tasks to resume, and
/// whether to call its `whenNonEmpty`.
struct ChannelWakes<Element: Sendable> {
  var senders: [CheckedContinuation<Bool, Never>] = []
  var roomWaiters: [CheckedContinuation<Bool, Never>] = []
  var receivers: [(CheckedContinuation<Element?, Never>, Element)] = []
  var becameNonEmpty = false
}
