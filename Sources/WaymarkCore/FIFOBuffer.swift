/// The storage of the ``Channel``: an array read from a moving head, so that taking the oldest
/// value does not shift the others (amortised O(1)), compacted when the array empties or the
/// read part outgrows the rest.
package struct FIFOBuffer<Element> {
  private var items: [Element] = []
  private var head = 0

  /// An empty buffer.
  package init() {}

  /// How many values wait.
  package var count: Int { items.count - head }

  /// Whether none waits.
  package var isEmpty: Bool { head == items.count }

  /// The oldest value, left in place.
  package var first: Element? { isEmpty ? nil : items[head] }

  /// Adds `element` after the others.
  package mutating func append(_ element: Element) { items.append(element) }

  /// Removes and returns the oldest value, `nil` when none waits.
  package mutating func removeFirst() -> Element? {
    guard head < items.count else { return nil }
    let element = items[head]
    head += 1
    if head == items.count {
      items.removeAll(keepingCapacity: true)
      head = 0
    } else if head > 1024 && head * 2 > items.count {
      items.removeFirst(head)
      head = 0
    }
    return element
  }

  /// Removes and returns the oldest value for which `matches` holds, `nil` when none does.
  package mutating func removeFirst(where matches: (Element) -> Bool) -> Element? {
    guard let index = items[head...].firstIndex(where: matches) else { return nil }
    return index == head ? removeFirst() : items.remove(at: index)
  }

  /// Removes and returns every value, oldest first.
  package mutating func removeAll() -> [Element] {
    defer {
      items.removeAll(keepingCapacity: true)
      head = 0
    }
    return Array(items[head...])
  }
}
