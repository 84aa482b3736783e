import CHelperLibc

// What the Glibc module gives the rest of the package and Embedded Swift does not: errno, a
// non-variadic open(2) and the command line.

/// The calling thread's `errno`.
var errno: Int32 {
  get { helper_errno() }
  set { helper_set_errno(newValue) }
}

/// open(2) without a mode (no file is created).
func open(_ path: UnsafePointer<CChar>, _ flags: Int32) -> Int32 {
  helper_open(path, flags)
}

/// The arguments the helper was started with (`argv`, its name first), from
/// `/proc/self/cmdline`: Embedded Swift has no `CommandLine`. Empty when it cannot be read.
func commandLineArguments() -> [String] {
  guard let bytes = ProcFS.read("/proc/self/cmdline", limit: 1 << 16) else { return [] }
  // NUL-terminated words; the last NUL ends the list rather than starting an empty word.
  return bytes.split(separator: 0, omittingEmptySubsequences: false).dropLast().map {
    String(decoding: $0, as: UTF8.self)
  }
}
