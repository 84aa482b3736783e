import FoundationEssentials
import Glibc
import WaymarkCLI

exit(await WaymarkCommandLine.main(CommandLine.arguments))
