// The process layer (exit codes, command errors, output, the store path, the argument parser)
// is visible in every file of the CLI through this one import, so that the commands' own import
// lines name only what they use besides it.
@_exported import WaymarkProcess
