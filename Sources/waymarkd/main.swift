import Glibc
import WaymarkDaemon
import WaymarkDaemonConfiguration

exit(await WaymarkDaemon.main(CommandLine.arguments))
