import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

// A closed pipe (`mapgate tile … | head -c 10`) is an error to handle, not a reason to die.
signal(SIGPIPE, SIG_IGN)
// Before any thread starts: every thread inherits the blocked terminating signals (SignalRouter).
SignalRouter.install()
StandardStreams.secure()
SignalRouter.exit(MapGateCLI.main(CommandLine.arguments, environment: ProcessInfo.processInfo.environment))
