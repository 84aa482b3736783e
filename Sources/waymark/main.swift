import Foundation
import WaymarkCLI

exit(await WaymarkCommandLine.main(CommandLine.arguments))
