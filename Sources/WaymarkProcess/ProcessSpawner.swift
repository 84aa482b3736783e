import Glibc

/// The process spawner of Waymark: `posix_spawn(3)` with the standard streams on pipes or
/// `/dev/null`, the signal mask cleared, and optionally a process group of its own and default
/// dispositions. The hooks (`HookProcess`), the test harness (`ChildProcess`: gpsd and
/// waymarkd under test; `CommandRun`: a program run to completion) and the benchmarks start
/// their children through it.
package enum ProcessSpawner {
  /// Why a child could not be started.
  package struct SpawnError: Error, Sendable, CustomStringConvertible {
    /// The failing call and its reason.
    package var description: String
  }

  /// Where a child's standard stream goes.
  package enum Stream: Sendable, Hashable {
    /// `/dev/null`.
    case null
    /// A new pipe; the parent's end is in ``Child``.
    case pipe
    /// For standard error: the same pipe or file as standard output.
    case standardOutput
    /// A file: read from for standard input; for output, created or truncated (mode 0644 less
    /// the umask) and written.
    case file(String)
  }

  /// How to start a child.
  package struct Options: Sendable {
    /// Standard input: ``Stream/null``, ``Stream/pipe`` or ``Stream/file(_:)``.
    package var standardInput = Stream.null
    /// Standard output: ``Stream/null``, ``Stream/pipe`` or ``Stream/file(_:)``.
    package var standardOutput = Stream.null
    /// Standard error: ``Stream/null``, ``Stream/pipe``, ``Stream/file(_:)`` or
    /// ``Stream/standardOutput``.
    package var standardError = Stream.null
    /// Start the child in a process group of its own (so that a signal reaches all it starts).
    package var newProcessGroup = false
    /// Signals whose disposition the child resets to the default (the parent may ignore or
    /// handle them).
    package var defaultSignals: [Int32] = []
    /// The child's working directory; `nil` keeps the parent's.
    package var workingDirectory: String?

    /// Options with every stream on `/dev/null`, the mask cleared and nothing else.
    package init() {}
  }

  /// A started child: its pid and the parent's ends of its pipes (close-on-exec; the caller
  /// owns them and must reap the child).
  package struct Child: Sendable {
    /// The child's process id.
    package var processID: pid_t
    /// The write end of its standard input, when piped.
    package var standardInput: Int32?
    /// The read end of its standard output (and error, when merged), when piped.
    package var standardOutput: Int32?
    /// The read end of its standard error, when piped on its own.
    package var standardError: Int32?
  }

  /// Starts `arguments[0]` (a path) with `arguments` as its argv and exactly `environment`.
  ///
  /// The child's signal mask is cleared: the parent may block signals the child must receive.
  ///
  /// - Throws: ``SpawnError`` when a pipe or `posix_spawn` fails (every descriptor opened is
  ///   closed again).
  ///
  /// Wraps `posix_spawn(3)`.
  package static func spawn(
    _ arguments: [String], environment: [String: String], options: Options = Options()
  ) throws(SpawnError) -> Child {
    var opened: [Int32] = []
    func makePipe() throws(SpawnError) -> (read: Int32, write: Int32) {
      var ends: [Int32] = [-1, -1]
      guard pipe(&ends) == 0 else {
        let reason = String(cString: strerror(errno))
        for descriptor in opened { close(descriptor) }
        throw SpawnError(description: "pipe: \(reason)")
      }
      for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
      opened += ends
      return (ends[0], ends[1])
    }
    let input = try options.standardInput == .pipe ? makePipe() : nil
    let output = try options.standardOutput == .pipe ? makePipe() : nil
    let error = try options.standardError == .pipe ? makePipe() : nil

    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    if let directory = options.workingDirectory {
      guard let addChangeDirectory = Self.addChangeDirectory,
        addChangeDirectory(&actions, directory) == 0
      else {
        for descriptor in opened { close(descriptor) }
        throw SpawnError(description: "\(arguments[0]): cannot change directory to \(directory)")
      }
    }
    let writeFlags = O_WRONLY | O_CREAT | O_TRUNC
    if let input {
      posix_spawn_file_actions_adddup2(&actions, input.read, 0)
    } else if case .file(let path) = options.standardInput {
      posix_spawn_file_actions_addopen(&actions, 0, path, O_RDONLY, 0)
    } else {
      posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    }
    if let output {
      posix_spawn_file_actions_adddup2(&actions, output.write, 1)
    } else if case .file(let path) = options.standardOutput {
      posix_spawn_file_actions_addopen(&actions, 1, path, writeFlags, 0o644)
    } else {
      posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    }
    switch options.standardError {
    case .pipe: posix_spawn_file_actions_adddup2(&actions, error!.write, 2)
    case .standardOutput: posix_spawn_file_actions_adddup2(&actions, 1, 2)
    case .file(let path): posix_spawn_file_actions_addopen(&actions, 2, path, writeFlags, 0o644)
    case .null: posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    }

    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var emptyMask = sigset_t()
    sigemptyset(&emptyMask)
    posix_spawnattr_setsigmask(&attributes, &emptyMask)
    var flags = Int32(POSIX_SPAWN_SETSIGMASK)
    if !options.defaultSignals.isEmpty {
      var defaults = sigset_t()
      sigemptyset(&defaults)
      for signal in options.defaultSignals { sigaddset(&defaults, signal) }
      posix_spawnattr_setsigdefault(&attributes, &defaults)
      flags |= Int32(POSIX_SPAWN_SETSIGDEF)
    }
    if options.newProcessGroup {
      posix_spawnattr_setpgroup(&attributes, 0)
      flags |= Int32(POSIX_SPAWN_SETPGROUP)
    }
    posix_spawnattr_setflags(&attributes, Int16(flags))

    let argv = arguments.map { strdup($0) } + [nil]
    let envp =
      environment.sorted { $0.key < $1.key }.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
      for pointer in argv { free(pointer) }
      for pointer in envp { free(pointer) }
    }
    var pid: pid_t = 0
    let status = posix_spawn(&pid, arguments[0], &actions, &attributes, argv, envp)
    // The child's ends belong to the child now.
    for end in [input?.read, output?.write, error?.write] {
      if let end { close(end) }
    }
    guard status == 0 else {
      for end in [input?.write, output?.read, error?.read] {
        if let end { close(end) }
      }
      throw SpawnError(description: "\(arguments[0]): \(String(cString: strerror(status)))")
    }
    return Child(
      processID: pid, standardInput: input?.write, standardOutput: output?.read,
      standardError: error?.read)
  }

  /// Waits for child `processID` to end and reaps it.
  ///
  /// - Returns: its exit status, or 128 + the signal's number when a signal ended it (as a
  ///   shell reports it).
  ///
  /// Wraps `waitpid(2)`.
  package static func waitForExit(_ processID: pid_t) -> Int32 {
    var status: Int32 = 0
    while waitpid(processID, &status, 0) < 0 && errno == EINTR {}
    return exitStatus(status)
  }

  /// A `waitpid(2)` status as a shell reports it: the exit status, or 128 + the signal's number
  /// when a signal ended the process.
  package static func exitStatus(_ status: Int32) -> Int32 {
    // WIFSIGNALED, WTERMSIG and WEXITSTATUS, which Swift does not import.
    let signal = status & 0x7f
    return signal != 0 && signal != 0x7f ? 128 + signal : (status >> 8) & 0xff
  }

  /// The C signature of glibc's `posix_spawn_file_actions_addchdir_np`.
  private typealias AddChangeDirectory =
    @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>)
    -> Int32

  /// glibc's `posix_spawn_file_actions_addchdir_np` (2.29 and later), which the Glibc module
  /// does not import (it is declared only for `_GNU_SOURCE`): looked up once by name.
  private static let addChangeDirectory: AddChangeDirectory? = {
    guard let symbol = dlsym(nil, "posix_spawn_file_actions_addchdir_np") else { return nil }
    return unsafeBitCast(symbol, to: AddChangeDirectory.self)
  }()
}
