import Glibc
import WaymarkService

exit(await WaymarkDaemon.main(CommandLine.arguments))
