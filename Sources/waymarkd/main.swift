import Foundation
import WaymarkCLI

exit(await WaymarkDaemon.main(CommandLine.arguments))
